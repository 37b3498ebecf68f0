package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// What version says of each kind of build.
func TestVersionOfEachBuild(t *testing.T) {
	rev := func(string) string { return "abc123" }
	none := func(string) string { return "" }
	for _, c := range []struct {
		name     string
		main     debug.Module
		settings []debug.BuildSetting
		revision func(string) string
		want     string
	}{
		{"a released version", debug.Module{Version: "v0.2.0"}, nil, rev, "hotkeygen v0.2.0 go1.26.0"},
		{"a build in the checkout", debug.Module{Version: "(devel)"},
			[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}, rev,
			"hotkeygen (devel) (revision abc123, modified) go1.26.0"},
		{"a build without a VCS stamp", debug.Module{}, nil, rev, "hotkeygen (devel) go1.26.0"},
		{"replaced by a git checkout", debug.Module{Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../hotkeygen"}}, nil, rev,
			"hotkeygen (devel) (replaced by ../hotkeygen, revision abc123) go1.26.0"},
		{"replaced by a directory that is not one", debug.Module{Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "/src/hotkeygen"}}, nil, none,
			"hotkeygen (devel) (replaced by /src/hotkeygen) go1.26.0"},
		{"replaced by another module", debug.Module{Version: "v0.2.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.2.1"}}, nil, rev,
			"hotkeygen v0.2.1 (replaced by example.com/fork) go1.26.0"},
	} {
		info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: c.main, Settings: c.settings}
		if got := versionOf(info, c.revision); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A replace directive's relative path is read from the module's root, as
// go reads it, wherever in the module the command runs: here, this
// repository's checkout replacing it from a module beside it.
func TestCheckoutRevisionReadsAReplacedDirectory(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("the repository is not a git checkout here: %v", err)
	}
	mod := newModule(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.26\n", "a/b/x.go": "package b\n"})
	rel, err := filepath.Rel(mod, repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(mod, "a", "b"))
	if got, want := checkoutRevision(rel), strings.TrimSpace(string(out)); got != want {
		t.Errorf("checkoutRevision(%q) from a package of the module = %q, want %q", rel, got, want)
	}
}
