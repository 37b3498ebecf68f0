// Package golden holds hotkeygen's end-to-end tests: every directory under
// the repository's testdata/ is a case, an input package with the file the
// generator must produce from it (hotkey_gen.go.golden) or the errors it
// must report (stderr.golden). A case whose Go files all lie in
// subdirectories is one run over every package under it, as hotkeygen
// ./... is. A case with a file named flags, holding -format=json or
// -format=github, has its findings in that format instead, as hotkeygen
// prints them on stdout (stdout.golden). Adding coverage means adding a
// directory;
// `go test ./internal/golden -update` rewrites the expectations.
//
// The package itself provides Diff, the line diff the tests print.
package golden
