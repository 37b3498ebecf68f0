package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/generator"
)

// A module of three packages: a and b cached, c not.
var module = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.26\n",
	"a/user.go": `package a

//hotkey:cache key=user:{ID}
type User struct {
	ID    int64
	Extra any
}
`,
	"b/order.go": `package b

//hotkey:cache key=order:{Tenant}:{Num}
type Order struct {
	Tenant string
	Num    uint32
}
`,
	"c/plain.go": "package c\n\ntype Plain struct{ ID int64 }\n",
}

func TestGenerateThenCheckIsClean(t *testing.T) {
	dir := newModule(t, module)
	if code, out := hotkeygen(t, dir, "./..."); code != 0 {
		t.Fatalf("hotkeygen ./... exited %d:\n%s", code, out)
	}
	for _, pkg := range []string{"a", "b"} {
		if got := read(t, filepath.Join(dir, pkg, "hotkey_gen.go")); !strings.HasPrefix(got, generator.Header+"\n") {
			t.Errorf("%s/hotkey_gen.go does not start with the header:\n%s", pkg, got)
		}
	}
	if exists(filepath.Join(dir, "c", "hotkey_gen.go")) {
		t.Error("c has no annotations, yet got a file")
	}
	if code, out := hotkeygen(t, dir, "-check", "./..."); code != 0 || out != "" {
		t.Fatalf("-check after generating exited %d:\n%s", code, out)
	}
}

func TestCheckReportsEachOutdatedFileAndWritesNothing(t *testing.T) {
	dir := newModule(t, module)
	if code, out := hotkeygen(t, dir, "./..."); code != 0 {
		t.Fatalf("hotkeygen exited %d:\n%s", code, out)
	}
	// a's output goes missing, b's goes stale, and c gains a generated
	// file although it has no annotation.
	os.Remove(filepath.Join(dir, "a", "hotkey_gen.go"))
	write(t, filepath.Join(dir, "b", "hotkey_gen.go"), read(t, filepath.Join(dir, "b", "hotkey_gen.go"))+"// edited\n")
	write(t, filepath.Join(dir, "c", "hotkey_gen.go"), generator.Header+"\n\npackage c\n")
	before := snapshot(t, dir)

	code, out := hotkeygen(t, dir, "-check", "./...")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wantLines := []string{
		"a/hotkey_gen.go: missing (",
		"b/hotkey_gen.go: stale",
		"  --- b/hotkey_gen.go (on disk)",
		"  +++ b/hotkey_gen.go (generated)",
		"  @@ ",
		"c/hotkey_gen.go: superfluous (its package has no //hotkey:cache annotation left)",
		"hotkeygen: generated code is out of date; run go tool hotkeygen ./...",
	}
	if code != 1 {
		t.Errorf("-check exited %d, want 1", code)
	}
	at := 0
	for _, l := range lines {
		if at < len(wantLines) && strings.HasPrefix(l, wantLines[at]) {
			at++
		}
	}
	if at < len(wantLines) || !strings.Contains(out, "\n  -// edited\n") {
		t.Errorf("-check printed:\n%s\nwant, in order, lines starting:\n%s\nand the edited line removed in the diff", out, strings.Join(wantLines, "\n"))
	}
	if after := snapshot(t, dir); !mapsEqual(before, after) {
		t.Error("-check changed files")
	}
}

func TestUnchangedOutputIsNotRewritten(t *testing.T) {
	dir := newModule(t, module)
	hotkeygen(t, dir, "./...")
	path := filepath.Join(dir, "a", "hotkey_gen.go")
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	if code, out := hotkeygen(t, dir, "-v", "./..."); code != 0 || strings.Contains(out, "wrote") {
		t.Fatalf("second run exited %d and said:\n%s", code, out)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.ModTime().Equal(past) {
		t.Errorf("a/hotkey_gen.go was rewritten: modified %v", info.ModTime())
	}
}

func TestAnErrorAnywhereWritesNothing(t *testing.T) {
	files := map[string]string{
		"go.mod":     module["go.mod"],
		"a/user.go":  module["a/user.go"],
		"b/order.go": strings.Replace(module["b/order.go"], "{Num}", "{Number}", 1),
	}
	dir := newModule(t, files)
	// a already has an outdated file: it must stay as it is.
	write(t, filepath.Join(dir, "a", "hotkey_gen.go"), generator.Header+"\n\npackage a\n")
	before := snapshot(t, dir)

	code, out := hotkeygen(t, dir, "./...")
	want := "b/order.go:3:35: order:{Tenant}:{Number}: the struct Order has no field Number; its fields are Tenant and Num\n"
	if code != 1 || out != want {
		t.Errorf("hotkeygen exited %d, printed:\n%s\nwant exit 1 and:\n%s", code, out, want)
	}
	if after := snapshot(t, dir); !mapsEqual(before, after) {
		t.Error("files changed although the run failed")
	}
}

// TestAChangeTheRunningBuildCannotReadIsRefused walks the deploy of a
// changed struct: generated once, the struct changes a field's kind;
// regenerating is refused at the field, writing nothing, and -check in CI
// says the same; version=2 makes the change, and going back is refused.
func TestAChangeTheRunningBuildCannotReadIsRefused(t *testing.T) {
	v1 := "package a\n\n//hotkey:cache key=user:{ID}\ntype User struct {\n\tID    int64\n\tScore int64\n}\n"
	dir := newModule(t, map[string]string{"go.mod": module["go.mod"], "a/user.go": v1})
	if code, out := hotkeygen(t, dir, "./..."); code != 0 {
		t.Fatalf("first run exited %d:\n%s", code, out)
	}
	write(t, filepath.Join(dir, "a", "user.go"), strings.Replace(v1, "Score int64", "Score string", 1))
	before := snapshot(t, dir)
	want := "a/user.go:6:2: User.Score: its msgpack kind changes from int64 to str, which the running build cannot decode (nor this one its values); set version=2 on User's //hotkey:cache line to give the new shape keys of its own (docs/changing-structs.md)\n"
	for _, args := range [][]string{{"./..."}, {"-check", "./..."}} {
		if code, out := hotkeygen(t, dir, args...); code != 1 || out != want {
			t.Errorf("hotkeygen %s exited %d, printed:\n%s\nwant exit 1 and:\n%s", strings.Join(args, " "), code, out, want)
		}
	}
	if after := snapshot(t, dir); !mapsEqual(before, after) {
		t.Error("files changed although the change was refused")
	}

	bumped := strings.Replace(strings.Replace(v1, "Score int64", "Score string", 1), "key=user:{ID}", "key=user:{ID} version=2", 1)
	write(t, filepath.Join(dir, "a", "user.go"), bumped)
	if code, out := hotkeygen(t, dir, "./..."); code != 0 {
		t.Fatalf("with version=2 exited %d:\n%s", code, out)
	}
	if got := read(t, filepath.Join(dir, "a", "hotkey_gen.go")); !strings.Contains(got, `"user:v2:"`) || !strings.Contains(got, "//hotkeygen:wire User version=2 ") {
		t.Errorf("the version=2 file neither keys its values apart nor records the version:\n%s", got)
	}
	write(t, filepath.Join(dir, "a", "user.go"), strings.Replace(bumped, " version=2", "", 1))
	if code, out := hotkeygen(t, dir, "./..."); code != 1 || !strings.Contains(out, "a/user.go:3:1: version=1 goes back from version 2") {
		t.Errorf("going back to version 1 exited %d:\n%s", code, out)
	}
}

// TestKeysAreCheckedAcrossTheRunsPackages: the packages of one run share
// one Redis, so two of them whose keys meet fail the run, whichever
// patterns name them, and nothing is written; a run of one of them alone
// cannot see the other.
func TestKeysAreCheckedAcrossTheRunsPackages(t *testing.T) {
	files := map[string]string{
		"go.mod":     module["go.mod"],
		"a/order.go": "package a\n\n//hotkey:cache key=order:{ID}\ntype Order struct{ ID int64 }\n",
		"b/order.go": "package b\n\n//hotkey:cache key=order:{Num}\ntype Order struct{ Num int64 }\n",
	}
	clash := "b/order.go:3:16: key=order:{Num} can produce the same Redis keys as key=order:{ID} of a.Order at a/order.go:3:1, so each would read and overwrite the other's values; give one a prefix of its own, as in b:order:{Num}\n"
	tests := []struct {
		name     string
		patterns []string
		want     string // printed; empty: the run succeeds
	}{
		{"both packages named", []string{"./a", "./b"}, clash},
		{"both packages under ./...", []string{"./..."}, clash},
		{"one package alone", []string{"./a"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newModule(t, files)
			before := snapshot(t, dir)
			code, out := hotkeygen(t, dir, tt.patterns...)
			switch {
			case tt.want == "" && code != 0:
				t.Fatalf("hotkeygen %s exited %d, printed:\n%s", strings.Join(tt.patterns, " "), code, out)
			case tt.want != "" && (code != 1 || out != tt.want):
				t.Fatalf("hotkeygen %s exited %d, printed:\n%s\nwant exit 1 and:\n%s", strings.Join(tt.patterns, " "), code, out, tt.want)
			case tt.want != "" && !mapsEqual(before, snapshot(t, dir)):
				t.Fatal("files changed although the run failed")
			}
		})
	}
}

func TestOutputGoesWhenTheLastAnnotationGoes(t *testing.T) {
	dir := newModule(t, module)
	hotkeygen(t, dir, "./...")
	write(t, filepath.Join(dir, "a", "user.go"), "package a\n\ntype User struct{ ID int64 }\n")
	// A file of the same name that hotkeygen did not write is not its to
	// remove.
	userFile := "package c\n\n// Written by hand.\n"
	write(t, filepath.Join(dir, "c", "hotkey_gen.go"), userFile)

	code, out := hotkeygen(t, dir, "-v", "./...")
	if code != 0 {
		t.Fatalf("hotkeygen exited %d:\n%s", code, out)
	}
	if exists(filepath.Join(dir, "a", "hotkey_gen.go")) {
		t.Error("a/hotkey_gen.go is still there")
	}
	if !strings.Contains(out, "removed a/hotkey_gen.go") {
		t.Errorf("-v did not report the removal:\n%s", out)
	}
	if got := read(t, filepath.Join(dir, "c", "hotkey_gen.go")); got != userFile {
		t.Errorf("c/hotkey_gen.go, written by hand, changed to:\n%s", got)
	}
}

func TestOutputFlagNamesTheFile(t *testing.T) {
	dir := newModule(t, module)
	if code, out := hotkeygen(t, dir, "-output", "cache_gen.go", "./a"); code != 0 {
		t.Fatalf("hotkeygen exited %d:\n%s", code, out)
	}
	if !exists(filepath.Join(dir, "a", "cache_gen.go")) || exists(filepath.Join(dir, "a", "hotkey_gen.go")) {
		t.Error("-output cache_gen.go did not write a/cache_gen.go alone")
	}
	if code, out := hotkeygen(t, dir, "-check", "-output", "cache_gen.go", "./a"); code != 0 {
		t.Errorf("-check -output cache_gen.go exited %d:\n%s", code, out)
	}
	if code, out := hotkeygen(t, dir, "-output", "sub/x.go", "./a"); code != 1 || !strings.Contains(out, "must be a file name") {
		t.Errorf("-output with a directory exited %d:\n%s", code, out)
	}
}

func TestVerboseSaysWhatWasGenerated(t *testing.T) {
	dir := newModule(t, module)
	code, out := hotkeygen(t, dir, "-v", "./...")
	if code != 0 {
		t.Fatalf("hotkeygen exited %d:\n%s", code, out)
	}
	want := []string{
		"example.com/m/a: UserRepo in a/hotkey_gen.go",
		"a.User.Extra (any) is copied shallowly",
		"a.User.Extra (any) is encoded by reflection",
		"example.com/m/b: OrderRepo in b/hotkey_gen.go",
		"wrote a/hotkey_gen.go",
		"wrote b/hotkey_gen.go",
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, want) {
		t.Errorf("-v printed:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}

func TestDefaultPatternIsTheCurrentPackage(t *testing.T) {
	dir := newModule(t, module)
	if code, out := hotkeygen(t, filepath.Join(dir, "b")); code != 0 {
		t.Fatalf("hotkeygen exited %d:\n%s", code, out)
	}
	if !exists(filepath.Join(dir, "b", "hotkey_gen.go")) || exists(filepath.Join(dir, "a", "hotkey_gen.go")) {
		t.Error("hotkeygen without patterns did not generate for the current package alone")
	}
}

func TestErrorsOfTheGoCommandAreReportedToo(t *testing.T) {
	dir := newModule(t, map[string]string{
		"go.mod":    module["go.mod"],
		"a/user.go": "package a\n\n//hotkey:cache key=user:{ID}\ntype User struct {\n\tID int64 = 1\n}\n",
	})
	code, out := hotkeygen(t, dir, "./...")
	if code != 1 || !strings.HasPrefix(out, "a/user.go:5:11: ") {
		t.Errorf("a syntax error: exited %d, printed:\n%s\nwant exit 1 and a/user.go:5:11: first", code, out)
	}
	code, out = hotkeygen(t, dir, "./nothing/...")
	if code != 1 || !strings.Contains(out, "nothing") {
		t.Errorf("a pattern that matches nothing: exited %d, printed:\n%s", code, out)
	}
}

// A misspelt directive is the only annotation of a package: nothing is
// generated, and the user is told why rather than left to wonder.
func TestMisspeltDirectiveIsWarnedAbout(t *testing.T) {
	dir := newModule(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"a/user.go": `package a

//hotkeys:cache key=user:{ID}
type User struct{ ID int64 }
`,
	})
	code, out := hotkeygen(t, dir, "./...")
	want := `a/user.go:3:1: warning: "//hotkeys:cache key=user:{ID}" is not a directive hotkeygen reads, so it is ignored; did you mean //hotkey:cache?`
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("hotkeygen exited %d, printing:\n%s\nwant 0, printing:\n%s", code, out, want)
	}
	if exists(filepath.Join(dir, "a", generator.DefaultOutput)) {
		t.Error("a file was generated from a misspelt directive")
	}
}

func TestVersionSaysWhichBuild(t *testing.T) {
	code, out := hotkeygen(t, t.TempDir(), "-version")
	// A test binary is a build from a checkout: no module version.
	if code != 0 || !strings.HasPrefix(out, "hotkeygen (devel)") || !strings.Contains(out, " go1.") {
		t.Fatalf("-version exited %d, printing %q; want hotkeygen (devel) and the Go version", code, out)
	}
}

// A stale file's diff is cut short, and without a superfluous file the
// advice is go generate.
func TestCheckCutsLongDiffs(t *testing.T) {
	dir := newModule(t, module)
	hotkeygen(t, dir, "./...")
	path := filepath.Join(dir, "b", "hotkey_gen.go")
	write(t, path, strings.ReplaceAll(read(t, path), "\t", "    "))
	code, out := hotkeygen(t, dir, "-check", "./...")
	if code != 1 || !strings.Contains(out, "more lines of diff") || !strings.HasSuffix(out, "run go generate ./...\n") {
		t.Fatalf("-check exited %d, printed:\n%s", code, out)
	}
	if n := strings.Count(out, "\n"); n > maxDiffLines+3 {
		t.Fatalf("-check printed %d lines for one file, want at most %d", n, maxDiffLines+3)
	}
}
