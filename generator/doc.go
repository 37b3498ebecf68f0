// Package generator turns structs annotated with //hotkey:cache into typed
// repositories over the hotkeygen runtime.
//
// Generation runs in four stages, each testable alone:
//
//   - load (load.go) reads the packages with go/packages, ignoring the
//     generator's own previous output so a stale file never blocks a run;
//   - model (find.go, model.go and the files it builds with: key.go,
//     keyspace.go, names.go, options.go, clone.go, codec.go, encodable.go,
//     collection.go, imports.go) turns each annotated struct and its parsed
//     annotations.Spec into an entity model: names, key parts, options,
//     import names, a deep-copy plan and a codec plan. Every problem is
//     collected with its position;
//   - emit (emit*.go) renders one file per package with jennifer, reading
//     only the model: the names it declares, the packages it imports and
//     the plans it follows all come from there;
//   - write (write.go) compares the rendered files with the disk, so the
//     caller can write what changed or, with -check, report it.
//
// What the stages share about the generated file, its Header, is in
// output.go: load hides a file that starts with it, emit writes it, and
// write removes only such a file.
//
// Generate runs the first three and returns a Result; nothing touches the
// disk until the caller applies it, so an error anywhere writes nothing.
package generator
