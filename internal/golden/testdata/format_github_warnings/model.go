package model

// A run that succeeds with a warning, as GitHub Actions workflow commands
// (flags: -format=github): the warning's command and nothing else.

// User is annotated as it should be.
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }

// Order has one letter too many.
//
//hotkeys:cache key=order:{ID}
type Order struct{ ID int64 }
