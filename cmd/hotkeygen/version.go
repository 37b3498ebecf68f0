package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// version says which build of hotkeygen this is: the module version go
// install and go tool record ("hotkeygen v0.2.0 go1.26.0"), or, for a
// build from a checkout, "(devel)" and the checkout's revision, read from
// the build's VCS stamp when the checkout is the main module, or from
// git when a module's replace directive points at the checkout (go does
// not stamp a replaced module's revision; it records the pseudo-version
// v0.0.0-00010101000000-000000000000, which would say nothing).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "hotkeygen (unknown version: built without module support)"
	}
	return versionOf(info, checkoutRevision)
}

// versionOf is version for info, asking revision for the revision of a
// replaced module's directory.
func versionOf(info *debug.BuildInfo, revision func(dir string) string) string {
	v := info.Main.Version
	switch r := info.Main.Replace; {
	case r != nil && (r.Version == "" || r.Version == "(devel)"): // replaced by a directory (the go command records "(devel)")
		v = "(devel) (replaced by " + r.Path
		if rev := revision(r.Path); rev != "" {
			v += ", revision " + rev
		}
		v += ")"
	case r != nil: // replaced by another module
		v = r.Version + " (replaced by " + r.Path + ")"
	case v == "" || v == "(devel)":
		v = "(devel)"
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
		if rev != "" {
			v += fmt.Sprintf(" (revision %s%s)", rev, modified)
		}
	}
	return "hotkeygen " + v + " " + info.GoVersion
}

// checkoutRevision returns the git revision of dir, a replace directive's
// path: relative to the go.mod of the module run from, found by walking up
// from the working directory as go does. "" when it is not known.
func checkoutRevision(dir string) string {
	if !filepath.IsAbs(dir) {
		root, err := moduleRoot()
		if err != nil {
			return ""
		}
		dir = filepath.Join(root, dir)
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// moduleRoot returns the directory of the go.mod nearest above the
// working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
