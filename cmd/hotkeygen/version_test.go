package main

import (
	"os"
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
		{"replaced by a git checkout, as Go 1.26 records it", debug.Module{Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: "../hotkeygen", Version: "(devel)"}}, nil, rev,
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
	repo, head := checkout(t)
	mod := newModule(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.26\n", "a/b/x.go": "package b\n"})
	rel, err := filepath.Rel(mod, repo)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(mod, "a", "b"))
	if got, want := checkoutRevision(rel), head; got != want {
		t.Errorf("checkoutRevision(%q) from a package of the module = %q, want %q", rel, got, want)
	}
}

// A build of the command from a module that replaces hotkeygen by this
// checkout, as README's local install makes it, says "(devel)", the
// directory and the checkout's revision: the go command's own build info,
// not one made up by the test.
func TestVersionOfABuildFromAReplacedCheckout(t *testing.T) {
	repo, head := checkout(t)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := newModule(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n\nrequire github.com/hotkeygen/hotkeygen v0.0.0-00010101000000-000000000000\n\n" +
			"tool github.com/hotkeygen/hotkeygen/cmd/hotkeygen\n\nreplace github.com/hotkeygen/hotkeygen => " + repo + "\n",
		"go.sum": string(sum),
	})
	bin := filepath.Join(t.TempDir(), "hotkeygen")
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, "github.com/hotkeygen/hotkeygen/cmd/hotkeygen")
	build.Dir, build.Env = mod, append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(bin, "version")
	run.Dir = mod
	out, err := run.Output()
	if err != nil {
		t.Fatalf("hotkeygen version: %v", err)
	}
	want := "hotkeygen (devel) (replaced by " + repo + ", revision " + head + ") go"
	if got := string(out); !strings.HasPrefix(got, want) {
		t.Errorf("hotkeygen version = %q, want it to start %q", got, want)
	}
}
