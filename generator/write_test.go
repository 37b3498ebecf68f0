package generator

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWriteNeedsOnlyAResult brings a directory in line with a Result made
// by hand: the write stage reads nothing the other stages hold.
func TestWriteNeedsOnlyAResult(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	ours := []byte(Header + "\n\npackage a\n")
	for name, content := range map[string][]byte{
		"same.go":  ours,
		"stale.go": ours,
		"gone.go":  ours,
		"taken.go": []byte("package a\n"), // someone else's since the run
	} {
		if err := os.WriteFile(path(name), content, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	fresh := []byte(Header + "\n\npackage a\n\nvar x int\n")
	res := &Result{Dir: dir,
		Files:  map[string][]byte{path("same.go"): ours, path("stale.go"): fresh, path("new.go"): fresh},
		Remove: []string{path("gone.go"), path("taken.go")},
	}
	changes, err := res.Write()
	if err != nil {
		t.Fatal(err)
	}
	// What it says of taken.go, which it leaves alone, is not the point.
	changes = slices.DeleteFunc(changes, func(c Change) bool { return c.Path == path("taken.go") })
	want := []Change{{path("gone.go"), Superfluous}, {path("new.go"), Missing}, {path("stale.go"), Stale}}
	if !slices.Equal(changes, want) {
		t.Errorf("Write = %v, want %v (a file already right is no change)", changes, want)
	}
	for name, want := range map[string][]byte{"same.go": ours, "stale.go": fresh, "new.go": fresh, "taken.go": []byte("package a\n")} {
		if got, err := os.ReadFile(path(name)); err != nil || string(got) != string(want) {
			t.Errorf("%s holds %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(path("gone.go")); !os.IsNotExist(err) {
		t.Errorf("gone.go was not removed: %v", err)
	}
}
