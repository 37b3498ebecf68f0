package golden

import (
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/generator"
	"github.com/hotkeygen/hotkeygen/internal/findings"
)

var update = flag.Bool("update", false, "rewrite the golden files from the generator's output")

// Golden file names in a case directory.
const (
	goldenOutput = "hotkey_gen.go.golden" // the generated file, for a case that succeeds
	goldenNotes  = "notes.golden"         // what -v prints, for a case that succeeds
	goldenStderr = "stderr.golden"        // the errors, for a case that fails
	goldenWarn   = "warnings.golden"      // the warnings, for a case that succeeds with some
	goldenStdout = "stdout.golden"        // the findings, for a case whose flags choose a format other than text
)

// caseFlags is the file of a case that names the flags of its run, on one
// line, as they would follow hotkeygen: only -format, which the golden
// files hold the findings in. Without it, a case's format is text.
const caseFlags = "flags"

// repoRoot is the repository's root directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// caseDirs lists the case directories under testdata/, by name: every
// directory but the tests' shared package.
func caseDirs(t testing.TB) map[string]string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{}
	for _, e := range entries {
		if e.IsDir() && e.Name() != sharedPackage {
			cases[e.Name()] = filepath.Join(dir, e.Name())
		}
	}
	if len(cases) == 0 {
		t.Fatalf("no cases in %s", dir)
	}
	return cases
}

// TestGolden runs the generator on every case and compares what it
// produces with the case's golden files. Positions in errors are relative
// to the case directory, so the files read the same on every machine.
func TestGolden(t *testing.T) {
	for name, dir := range caseDirs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			format := caseFormat(t, dir)
			res, err := generator.Generate(generator.Config{Dir: dir, Patterns: patterns(t, dir)})
			var list generator.ErrorList
			switch {
			case errors.As(err, &list):
				namesRules(t, list)
				compareFindings(t, dir, format, goldenStderr, list)
				absent(t, dir, goldenOutput, goldenNotes, goldenWarn)
			case err != nil:
				t.Fatalf("Generate: %v", err) // not a problem of the input
			default:
				out := filepath.Join(dir, generator.DefaultOutput)
				got, ok := res.Files[out]
				if !ok || len(res.Files) != 1 {
					t.Fatalf("Generate returned files %v, want exactly %s", keys(res.Files), out)
				}
				compare(t, dir, goldenOutput, string(got))
				compare(t, dir, goldenNotes, strings.Join(res.Notes, "\n")+"\n")
				absent(t, dir, goldenStderr)
				namesRules(t, res.Warnings)
				compareFindings(t, dir, format, goldenWarn, res.Warnings)
			}
		})
	}
}

// namesRules checks that every finding of list names the rule it breaks,
// which CI reads instead of the message.
func namesRules(t *testing.T, list generator.ErrorList) {
	t.Helper()
	for _, e := range list {
		if e.Rule == "" {
			t.Errorf("%v names no rule", e)
		}
	}
}

// caseFormat reads the -format of a case's flags file, if it has one.
func caseFormat(t *testing.T, dir string) findings.Format {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, caseFlags))
	if errors.Is(err, fs.ErrNotExist) {
		return findings.Text
	}
	if err != nil {
		t.Fatal(err)
	}
	flags := flag.NewFlagSet(caseFlags, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	format := flags.String("format", string(findings.Text), "")
	if err := flags.Parse(strings.Fields(string(b))); err != nil || flags.NArg() > 0 {
		t.Fatalf("%s: %q: a case's flags may set -format alone (%v)", caseFlags, b, err)
	}
	f, err := findings.ParseFormat(*format)
	if err != nil {
		t.Fatalf("%s: -format: %v", caseFlags, err)
	}
	return f
}

// compareFindings checks the findings of a case, list, against its golden
// file, as hotkeygen prints them in format: in the text format on stderr,
// text naming the file (none when list is empty); in another format on
// stdout, even an empty list (json prints a document for it).
func compareFindings(t *testing.T, dir string, format findings.Format, text string, list generator.ErrorList) {
	t.Helper()
	name := goldenStdout
	if format == findings.Text {
		name = text
		absent(t, dir, goldenStdout)
		if len(list) == 0 {
			absent(t, dir, name)
			return
		}
	} else {
		absent(t, dir, goldenStderr, goldenWarn)
	}
	var b strings.Builder
	if err := findings.Write(&b, format, list); err != nil {
		t.Fatal(err)
	}
	compare(t, dir, name, b.String())
}

// patterns are the packages a case generates in one run: its own, or,
// when its Go files all lie in subdirectories, every package under it,
// as hotkeygen ./... does, for what is checked across packages.
func patterns(t *testing.T, dir string) []string {
	t.Helper()
	if own, err := filepath.Glob(filepath.Join(dir, "*.go")); err != nil || len(own) > 0 {
		return []string{"."}
	}
	return []string{"./..."}
}

// compare checks got against the golden file name in dir, or rewrites the
// file with -update.
func compare(t *testing.T, dir, name, got string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/golden -update to create it)", err)
	}
	if d := Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, d)
	}
}

// absent checks that a case holds none of the golden files that belong to
// the other outcome, or removes them with -update.
func absent(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err == nil {
			if *update {
				os.Remove(path)
				continue
			}
			t.Errorf("%s exists, but the case produced the other outcome", name)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
