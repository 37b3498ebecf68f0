package model

// A directive written a slip away from //hotkey:cache is not read, and
// hotkeygen warns about it rather than ignoring it in silence.

// User is annotated as it should be.
//
//hotkey:cache key=user:{ID}
type User struct{ ID int64 }

// Order has one letter too many.
//
//hotkeys:cache key=order:{ID}
type Order struct{ ID int64 }

// Cart is capitalised.
//
// HotKey:cache key=cart:{ID}
type Cart struct{ ID int64 }

// Line has no colon.
//
// hotkey-cache key=line:{ID}
type Line struct{ ID int64 }
