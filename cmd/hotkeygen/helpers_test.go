package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newModule writes files into a fresh directory and returns it.
func newModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	return dir
}

// checkout returns this repository's directory and its git revision.
func checkout(t *testing.T) (repo, head string) {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("the repository is not a git checkout here: %v", err)
	}
	return repo, strings.TrimSpace(string(out))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// hotkeygen runs the command in dir and returns its exit status and what
// it printed on stderr, where the text format prints.
func hotkeygen(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	code, _, stderr := hotkeygenOutputs(t, dir, args...)
	return code, stderr
}

// hotkeygenOutputs runs the command in dir and returns its exit status
// and what it printed on stdout and on stderr.
func hotkeygenOutputs(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = run(args, dir, &out, &errs)
	return code, out.String(), errs.String()
}

// snapshot records every file under dir with its content and modification
// time, to prove a run wrote nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, _ := d.Info()
		files[path] = read(t, path) + "@" + info.ModTime().String()
		return nil
	})
	return files
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
