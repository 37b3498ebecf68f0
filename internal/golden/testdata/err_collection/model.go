package model

import "time"

// Every rule of a collection (layout=hash), all reported at once.

// Session names a key field as the item field: every item of one
// collection would share it.
//
//hotkey:cache key=session:{UserID} layout=hash field={UserID}
type Session struct {
	UserID int64
	ID     string
}

// Device names a field it lacks, and an expiry that is not a time.Time.
//
//hotkey:cache key=device:{UserID} layout=hash field={Serail} expires=Until
type Device struct {
	UserID int64
	Serial string
	Until  int64
}

// Price keys items by a float, which a key cannot hold, and names an
// expiry the struct does not store.
//
//hotkey:cache key=price:{SKU} layout=hash field={Amount} expires=until
type Price struct {
	SKU    string
	Amount float64
	until  time.Time
}

// Stray sets field and expires on a String entity, and Bare a hash
// without a field.
//
//hotkey:cache key=stray:{ID} field={Name} expires=At
type Stray struct {
	ID   int64
	Name string
	At   time.Time
}

//hotkey:cache key=bare:{ID} layout=hash
type Bare struct{ ID int64 }
