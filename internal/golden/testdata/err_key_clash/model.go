package model

// User and Account would both store user:5.
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }

// Account differs from User in the field's name only.
//
//hotkey:cache key=user:{Name}
type Account struct{ Name string }

// Order and Archived share one template.
//
//hotkey:cache key=order:{Tenant}:{Num}
type Order struct {
	Tenant string
	Num    uint32
}

// Archived is Order again.
//
//hotkey:cache key=order:{Tenant}:{Num}
type Archived struct {
	Tenant string
	Num    uint32
}

// Settings stays apart from User and Account: Name is escaped wherever it
// holds ':', and ID cannot hold it.
//
//hotkey:cache key=user:{ID}:settings
type Settings struct{ ID int64 }
