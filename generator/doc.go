// Package generator turns structs annotated with //hotkey:cache into typed
// repositories over the hotkeygen runtime.
//
// Generation runs in four stages, each testable alone:
//
//   - load (load.go) reads the packages with go/packages, ignoring the
//     generator's own previous output so a stale file never blocks a run;
//   - model (find.go, model.go, clone.go) turns each annotated struct and
//     its parsed annotations.Spec into an entity model: names, key parts, options
//     and a deep-copy plan. Every problem is collected with its position;
//   - emit (emit*.go) renders one file per package with jennifer, reading
//     only the model;
//   - write (write.go) compares the rendered files with the disk, so the
//     caller can write what changed or, with -check, report it.
//
// Generate runs the first three and returns a Result; nothing touches the
// disk until the caller applies it, so an error anywhere writes nothing.
package generator
