package model

// Setting's key fields would become the fields of a SettingKey struct,
// where a field String clashes with the method that builds the Redis key.
//
//hotkey:cache key=setting:{Scope}:{String}
type Setting struct {
	Scope  string
	String string
	Value  string
}

// Label is keyed by its field String alone, which is fine: a single-field
// key is the field's own type, with no struct around it.
//
//hotkey:cache key=label:{String}
type Label struct {
	String string
}
