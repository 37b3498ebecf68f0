package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/generator"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// TestGeneratedCodeBuildsAndRuns proves the golden files are code, not just
// bytes: every successful case, input and expected output, becomes a
// package of one temporary module that go vet compiles and checks. Cases
// with an e2e_test.go then run it: against a real redis-server for the
// repositories, in memory for the clone functions and key builders. The
// module also holds the package example.com/golden/e2e, copied from
// internal/golden/testdata/e2e, through which those tests connect to the
// redis-server.
//
// The module requires this repository through a replace directive and
// reuses its go.sum, so it builds offline from the module cache.
func TestGeneratedCodeBuildsAndRuns(t *testing.T) {
	srv := redistest.Start(t)
	root := repoRoot(t)
	mod := t.TempDir()
	writeModule(t, root, mod)
	copyDir(t, filepath.Join("testdata", sharedPackage), filepath.Join(mod, sharedPackage))

	var cases []string
	for name, dir := range caseDirs(t) {
		if name == sharedPackage {
			t.Fatalf("case %s has the name of the package the cases' tests share", dir)
		}
		out, err := os.ReadFile(filepath.Join(dir, goldenOutput))
		if err != nil {
			continue // a failing case
		}
		dst := filepath.Join(mod, name)
		copyDir(t, dir, dst)
		if err := os.WriteFile(filepath.Join(dst, generator.DefaultOutput), relocate(out), 0o666); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, name)
	}
	slices.Sort(cases)
	t.Logf("cases: %s", strings.Join(cases, ", "))

	start := time.Now()
	goCmd(t, mod, nil, "vet", "./...")
	t.Logf("go vet ./... took %v", time.Since(start).Round(time.Millisecond))
	// vet ran already; without symbol tables each test binary, all of
	// them linking go-redis, links in half the time. -trimpath keeps the
	// temporary directory out of the build cache's keys, so a case whose
	// inputs did not change is not compiled again on the next run.
	start = time.Now()
	args := []string{"test", "-count=1", "-vet=off", "-trimpath", "-ldflags=-s -w"}
	if raceDetector {
		args = append(args, "-race")
	}
	t.Logf("%s", goCmd(t, mod, []string{"REDIS_ADDR=" + srv.Addr}, append(args, "./...")...))
	t.Logf("go test ./... took %v", time.Since(start).Round(time.Millisecond))

	if *fuzzTime == "" {
		return
	}
	// make fuzz: the cases' fuzz targets exist only in this module.
	for _, name := range cases {
		list := string(goCmd(t, mod, nil, "test", "-list", "^Fuzz", "./"+name))
		for _, target := range strings.Fields(list) {
			if !strings.HasPrefix(target, "Fuzz") {
				continue
			}
			t.Logf("fuzz: %s in %s for %s", target, name, *fuzzTime)
			t.Logf("%s", goCmd(t, mod, []string{"REDIS_ADDR=" + srv.Addr}, "test", "-run", "^$", "-fuzz", "^"+target+"$", "-fuzztime", *fuzzTime, "./"+name))
		}
	}
}

// fuzzTime, when set, has TestGeneratedCodeBuildsAndRuns fuzz every fuzz
// target of the cases for that long each, after their tests passed: make
// fuzz sets it, since those targets live only in the module the test
// builds.
var fuzzTime = flag.String("fuzztime-generated", "", "fuzz the golden cases' fuzz targets for this long each (a go test -fuzztime value)")

// casesPath is the import path of the cases here; in the module they
// are example.com/golden/<case>, since a package under internal/ cannot
// be imported from another module.
const casesPath = "github.com/hotkeygen/hotkeygen/internal/golden/testdata/"

// relocate rewrites a case's file for the module: its imports of the
// cases' packages (a case's subpackage) move with it.
func relocate(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`"`+casesPath), []byte(`"example.com/golden/`))
}

// sharedPackage is the directory, under testdata/ here and in the
// module, of the package the cases' e2e tests import as
// example.com/golden/e2e.
const sharedPackage = "e2e"

// writeModule writes go.mod and go.sum of a module that requires this
// repository, replaced by its working tree, with the same versions of
// everything else.
func writeModule(t *testing.T, root, mod string) {
	t.Helper()
	var gomod struct {
		Go      string
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(goCmd(t, root, nil, "mod", "edit", "-json"), &gomod); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module example.com/golden\n\ngo %s\n\nrequire (\n\tgithub.com/hotkeygen/hotkeygen v0.0.0\n", gomod.Go)
	for _, r := range gomod.Require {
		fmt.Fprintf(&b, "\t%s %s\n", r.Path, r.Version)
	}
	fmt.Fprintf(&b, ")\n\nreplace github.com/hotkeygen/hotkeygen => %s\n", root)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(b.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o666); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a directory, such as a case's, without its golden files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o777)
		}
		if strings.HasSuffix(path, ".golden") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, relocate(b), 0o666)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// offline is the environment of the go command in a module writeModule
// wrote: this process's, building from the module cache alone.
func offline() []string {
	return append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
}

// goCmd runs the go command in dir, offline, and returns its output; a
// failure fails the test with everything the command printed.
func goCmd(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(offline(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s%s", strings.Join(args, " "), dir, err, out, stderr.Bytes())
	}
	return out
}

// TestStaleGeneratedCodeSaysSo changes a struct under its generated file,
// as a user who forgot go generate does, and checks what the compiler
// prints: the message itself, not a comment it does not show, must say
// that the generated code is stale and how to fix it. One change trips
// the key guard (the key field's type), one the clone guard (a field
// added).
func TestStaleGeneratedCodeSaysSo(t *testing.T) {
	tests := []struct {
		name, from, to string
	}{
		{"a key field changed type", "\tID   int64\n", "\tID   string\n"},
		{"a field was added", "\tName string\n", "\tName string\n\tNick []string\n"},
	}
	root := repoRoot(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod := t.TempDir()
			writeModule(t, root, mod)
			dir := filepath.Join("testdata", "single_entity")
			dst := filepath.Join(mod, "single_entity")
			copyDir(t, dir, dst)
			os.Remove(filepath.Join(dst, "e2e_test.go"))
			out, err := os.ReadFile(filepath.Join(dir, goldenOutput))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, generator.DefaultOutput), out, 0o666); err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(filepath.Join(dst, "user.go"))
			if err != nil || !bytes.Contains(src, []byte(tt.from)) {
				t.Fatalf("user.go of the case lacks %q (%v)", tt.from, err)
			}
			if err := os.WriteFile(filepath.Join(dst, "user.go"), bytes.Replace(src, []byte(tt.from), []byte(tt.to), 1), 0o666); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "build", "./...")
			cmd.Dir = mod
			cmd.Env = offline()
			msg, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatal("the stale package compiled")
			}
			if !bytes.Contains(msg, []byte("generated_code_is_stale__run_go_generate")) {
				t.Fatalf("the compiler's message does not say the generated code is stale:\n%s", msg)
			}
			t.Logf("%s", msg)
		})
	}
}
