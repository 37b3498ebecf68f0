// Package annotations turns //hotkey:cache directives into a validated Spec.
//
// Service teams mark a struct for caching in its doc comment:
//
//	//hotkey:cache key=user:{ID} ttl=30m hot_qps=3000 top_n=10
//	type User struct { ID int64; Name string }
//
// Options are space-separated name=value arguments; a value holding spaces
// is written as a Go double-quoted string (key="user {Org}:{ID}"). A doc
// comment may carry several //hotkey:cache lines: their options merge.
// The options configuring the cache are declared once, in the runtime
// (runtime/internal/config/options.go); options.go adds those shaping the generated code,
// and the syntax of each kind of value.
//
// Defaults and the rules relating options to each other belong to the
// runtime (runtime.DefaultConfig and runtime.Config.Validate), so the
// generator and the caches it feeds can never disagree about them. This
// package only adds what the runtime cannot know: where in the source each
// value was written, so every problem is reported at file:line:col.
package annotations
