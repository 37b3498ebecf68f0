package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/generator"
)

// Modules whose runs find something.
var (
	// anErrorAndAWarning: a's jitter does not parse (its message holds a
	// '%', which a workflow command escapes); b's directive is misspelt.
	anErrorAndAWarning = map[string]string{
		"go.mod":    module["go.mod"],
		"a/user.go": "package a\n\n//hotkey:cache key=user:{ID} jitter=lots\ntype User struct{ ID int64 }\n",
		"b/user.go": "package b\n\n//hotkeys:cache key=user:{ID}\ntype User struct{ ID int64 }\n",
	}
	aWarning = map[string]string{
		"go.mod":    module["go.mod"],
		"b/user.go": anErrorAndAWarning["b/user.go"],
	}
	noPackage = map[string]string{"go.mod": module["go.mod"]}
)

// anErrorAndAWarningText is what the text format prints for
// anErrorAndAWarning.
const anErrorAndAWarningText = `a/user.go:3:30: jitter: "lots" is not a fraction; use a form like 0.05 or 5%
b/user.go:3:1: warning: "//hotkeys:cache key=user:{ID}" is not a directive hotkeygen reads, so it is ignored; did you mean //hotkey:cache?
`

// outdate makes -check find, in module once generated, each kind of file
// out of date: a's gone missing, b's stale, c's superfluous.
func outdate(t *testing.T, dir string) {
	t.Helper()
	if code, out := hotkeygen(t, dir, "./..."); code != 0 {
		t.Fatalf("generating exited %d:\n%s", code, out)
	}
	os.Remove(filepath.Join(dir, "a", "hotkey_gen.go"))
	write(t, filepath.Join(dir, "b", "hotkey_gen.go"), read(t, filepath.Join(dir, "b", "hotkey_gen.go"))+"// edited\n")
	write(t, filepath.Join(dir, "c", "hotkey_gen.go"), generator.Header+"\n\npackage c\n")
}

// TestFindingsInEachFormat is the specification of -format: what each
// format prints, and where, for an error and a warning of the generator,
// a warning alone, -check's files out of date, a run that finds no
// package, and a run that finds nothing. The text format's -check, with
// its diffs, is TestCheckReportsEachOutdatedFileAndWritesNothing's.
func TestFindingsInEachFormat(t *testing.T) {
	for _, tt := range []struct {
		name           string
		files          map[string]string
		prepare        func(t *testing.T, dir string) // nil: none
		args           []string
		code           int
		stdout, stderr string
	}{{
		name:   "text: one finding a line on stderr, a warning's message starting warning:",
		files:  anErrorAndAWarning,
		args:   []string{"./..."},
		code:   1,
		stderr: anErrorAndAWarningText,
	}, {
		name:   "-format=text is the default",
		files:  anErrorAndAWarning,
		args:   []string{"-format=text", "./..."},
		code:   1,
		stderr: anErrorAndAWarningText,
	}, {
		name:  "json: one document on stdout, the severity apart from the message",
		files: anErrorAndAWarning,
		args:  []string{"-format=json", "./..."},
		code:  1,
		stdout: `{
  "findings": [
    {
      "file": "a/user.go",
      "line": 3,
      "column": 30,
      "severity": "error",
      "rule": "UNPARSABLE_VALUE",
      "message": "jitter: \"lots\" is not a fraction; use a form like 0.05 or 5%"
    },
    {
      "file": "b/user.go",
      "line": 3,
      "column": 1,
      "severity": "warning",
      "rule": "DIRECTIVE_MISSPELT",
      "message": "\"//hotkeys:cache key=user:{ID}\" is not a directive hotkeygen reads, so it is ignored; did you mean //hotkey:cache?"
    }
  ]
}
`,
	}, {
		name:  "github: a workflow command a finding on stdout, titled by its rule, '%' escaped",
		files: anErrorAndAWarning,
		args:  []string{"-format=github", "./..."},
		code:  1,
		stdout: `::error file=a/user.go,line=3,col=30,title=UNPARSABLE_VALUE::jitter: "lots" is not a fraction; use a form like 0.05 or 5%25
::warning file=b/user.go,line=3,col=1,title=DIRECTIVE_MISSPELT::"//hotkeys:cache key=user:{ID}" is not a directive hotkeygen reads, so it is ignored; did you mean //hotkey:cache?
`,
	}, {
		name:  "json: a warning alone, which fails nothing",
		files: aWarning,
		args:  []string{"-format=json", "./..."},
		code:  0,
		stdout: `{
  "findings": [
    {
      "file": "b/user.go",
      "line": 3,
      "column": 1,
      "severity": "warning",
      "rule": "DIRECTIVE_MISSPELT",
      "message": "\"//hotkeys:cache key=user:{ID}\" is not a directive hotkeygen reads, so it is ignored; did you mean //hotkey:cache?"
    }
  ]
}
`,
	}, {
		name:    "json: -check's files, each without a line, with the command that mends it",
		files:   module,
		prepare: outdate,
		args:    []string{"-check", "-format=json", "./..."},
		code:    1,
		stdout: `{
  "findings": [
    {
      "file": "a/hotkey_gen.go",
      "severity": "error",
      "rule": "MISSING_FILE",
      "message": "missing: its package has //hotkey:cache annotations; run go generate ./..."
    },
    {
      "file": "b/hotkey_gen.go",
      "severity": "error",
      "rule": "STALE_FILE",
      "message": "stale: it differs from what hotkeygen generates now; run go generate ./..."
    },
    {
      "file": "c/hotkey_gen.go",
      "severity": "error",
      "rule": "SUPERFLUOUS_FILE",
      "message": "superfluous: its package has no //hotkey:cache annotation left; run go tool hotkeygen ./... (go generate cannot remove a file whose package no longer asks for hotkeygen)"
    }
  ]
}
`,
	}, {
		name:    "github: -check's files, each without a line",
		files:   module,
		prepare: outdate,
		args:    []string{"-check", "-format=github", "./..."},
		code:    1,
		stdout: `::error file=a/hotkey_gen.go,title=MISSING_FILE::missing: its package has //hotkey:cache annotations; run go generate ./...
::error file=b/hotkey_gen.go,title=STALE_FILE::stale: it differs from what hotkeygen generates now; run go generate ./...
::error file=c/hotkey_gen.go,title=SUPERFLUOUS_FILE::superfluous: its package has no //hotkey:cache annotation left; run go tool hotkeygen ./... (go generate cannot remove a file whose package no longer asks for hotkeygen)
`,
	}, {
		name:   "text: a run that finds no package",
		files:  noPackage,
		args:   []string{"./..."},
		code:   1,
		stderr: "no packages match ./...\n",
	}, {
		name:  "json: a run that finds no package, a finding without a file",
		files: noPackage,
		args:  []string{"-format=json", "./..."},
		code:  1,
		stdout: `{
  "findings": [
    {
      "severity": "error",
      "rule": "RUN_FAILED",
      "message": "no packages match ./..."
    }
  ]
}
`,
	}, {
		name:   "github: a run that finds no package, a command without a file",
		files:  noPackage,
		args:   []string{"-format=github", "./..."},
		code:   1,
		stdout: "::error title=RUN_FAILED::no packages match ./...\n",
	}, {
		name:   "json: nothing found is an empty list, not nothing",
		files:  module,
		args:   []string{"-format=json", "./..."},
		stdout: "{\n  \"findings\": []\n}\n",
	}, {
		name:    "json: -check finding nothing out of date",
		files:   module,
		prepare: func(t *testing.T, dir string) { hotkeygen(t, dir, "./...") },
		args:    []string{"-check", "-format=json", "./..."},
		stdout:  "{\n  \"findings\": []\n}\n",
	}, {
		name:  "github: nothing found prints nothing",
		files: module,
		args:  []string{"-format=github", "./..."},
	}, {
		name:   "-v says what it did on stderr whatever the format",
		files:  map[string]string{"go.mod": module["go.mod"], "b/order.go": module["b/order.go"]},
		args:   []string{"-v", "-format=github", "./..."},
		stderr: "example.com/m/b: OrderRepo in b/hotkey_gen.go\nwrote b/hotkey_gen.go\n",
	}, {
		name:   "an unknown format is a usage error, on stderr",
		files:  module,
		args:   []string{"-format=xml", "./..."},
		code:   2,
		stderr: "hotkeygen: -format: unknown format \"xml\"; use text, json or github\n",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newModule(t, tt.files)
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			code, stdout, stderr := hotkeygenOutputs(t, dir, tt.args...)
			if code != tt.code || stdout != tt.stdout || stderr != tt.stderr {
				t.Errorf("hotkeygen %s exited %d, printing on stdout:\n%s\non stderr:\n%s\nwant %d,\n%s\nand\n%s",
					strings.Join(tt.args, " "), code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// The exit status says whether anything fails, the same in every format:
// 0 for nothing or warnings alone, 1 for an error or a file out of date,
// 2 for a usage error.
func TestExitStatusesAreTheSameInEveryFormat(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		prepare func(t *testing.T, dir string)
		args    []string
		code    int
	}{
		{"nothing found", module, nil, []string{"./..."}, exitClean},
		{"a warning alone", aWarning, nil, []string{"./..."}, exitClean},
		{"-check finding nothing out of date", module, func(t *testing.T, dir string) { hotkeygen(t, dir, "./...") }, []string{"-check", "./..."}, exitClean},
		{"-h", module, nil, []string{"-h"}, exitClean},
		{"an error", anErrorAndAWarning, nil, []string{"./..."}, exitFindings},
		{"-check finding files out of date", module, outdate, []string{"-check", "./..."}, exitFindings},
		{"a run that finds no package", noPackage, nil, []string{"./..."}, exitFindings},
		{"an unknown flag", module, nil, []string{"-frobnicate", "./..."}, exitUsage},
	}
	for _, format := range []string{"text", "json", "github"} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				dir := newModule(t, tt.files)
				if tt.prepare != nil {
					tt.prepare(t, dir)
				}
				args := append([]string{"-format=" + format}, tt.args...)
				if code, stdout, stderr := hotkeygenOutputs(t, dir, args...); code != tt.code {
					t.Errorf("hotkeygen %s exited %d, want %d; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, tt.code, stdout, stderr)
				}
			})
		}
	}
	if code, _, stderr := hotkeygenOutputs(t, t.TempDir(), "-h"); !strings.Contains(stderr, exitStatuses) || code != exitClean {
		t.Errorf("-h exited %d and printed:\n%s\nwithout the exit statuses", code, stderr)
	}
}
