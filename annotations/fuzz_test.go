package annotations

import (
	"errors"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParseLine checks that no comment makes the parser panic, that every
// error can be shown at a place in the source, and that whatever it accepts
// the runtime accepts too.
func FuzzParseLine(f *testing.F) {
	for _, tt := range wellFormed {
		addLines(f, tt.doc)
	}
	for _, tt := range malformed {
		addLines(f, tt.doc)
	}
	addLines(f, valueEdges)
	golden, err := directiveLines(filepath.Join("..", "internal", "golden", "testdata"))
	if err != nil {
		f.Fatal(err)
	}
	addLines(f, golden)

	f.Fuzz(func(t *testing.T, line string) {
		spec, err := ParseLine(token.Position{Filename: "fuzz.go", Line: 1, Column: 1}, line)
		if err != nil {
			if spec != nil && spec.Key.Raw != "" && len(spec.Key.Fields()) == 0 {
				t.Errorf("ParseLine(%q) returned, along with errors, key %q without a field", line, spec.Key.Raw)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("ParseLine(%q) error %v is not a non-empty ErrorList", line, err)
			}
			for _, e := range list {
				if e.Pos.Line <= 0 || e.Pos.Column <= 0 || e.Msg == "" {
					t.Errorf("ParseLine(%q): error without position or message: %+v", line, e)
				}
			}
			return
		}
		if spec == nil {
			return
		}
		cfg := spec.Config
		if err := cfg.Validate(); err != nil {
			t.Errorf("ParseLine(%q) accepted a Spec the runtime rejects: %v", line, err)
		}
		if len(spec.Key.Fields()) == 0 {
			t.Errorf("ParseLine(%q) accepted key %q without a field", line, spec.Key.Raw)
		}
		var rebuilt strings.Builder
		for _, p := range spec.Key.Parts {
			if (p.Lit == "") == (p.Field == "") {
				t.Errorf("ParseLine(%q): part %+v must be a literal or a field", line, p)
			}
			if p.Pos.Column <= 0 || p.Pos.Column > len(line) {
				t.Errorf("ParseLine(%q): part %+v lies outside the line", line, p)
			}
			rebuilt.WriteString(p.Lit)
			if p.Field != "" {
				rebuilt.WriteString("{" + p.Field + "}")
			}
		}
		if rebuilt.String() != spec.Key.Raw {
			t.Errorf("ParseLine(%q): parts spell %q, not the key %q", line, rebuilt.String(), spec.Key.Raw)
		}
	})
}

// valueEdges are values at the edges of the option kinds that the tables
// do not spell out: rounding onto a limit, the int boundary of a unit,
// quoting, signs and letters outside ASCII.
var valueEdges = []string{
	`//hotkey:cache key=k:{ID} jitter=99.99999999999999999%`,
	`//hotkey:cache key=k:{ID} jitter=0.99999999999999999`,
	`//hotkey:cache key=k:{ID} jitter=-0 null_ttl=1ms`,
	`//hotkey:cache key=k:{ID} jitter=+.5% null_ttl=999us`,
	`//hotkey:cache key=k:{ID} jitter=5. rebuild_lock="on" degrade="loader"`,
	`//hotkey:cache key=k:{ID} max_value_bytes=8796093022207MiB max_value_bytes_hard=8796093022208MiB`,
	`//hotkey:cache key=k:{ID} max_value_bytes_hard=-8796093022208MiB`,
	`//hotkey:cache key=k:{ID} max_value_bytes=16µB max_value_bytes_hard="16 KiB"`,
	`//hotkey:cache key=k:{ID} max_value_bytes=0B max_value_bytes_hard=0x10`,
	`//hotkey:cache key=k:{ID} rebuild_lock=True degrade=Loader`,
}

func addLines(f *testing.F, lines []string) {
	for _, line := range lines {
		f.Add(line)
	}
}

// directiveLines returns the hotkey lines, well-formed or not, of the Go
// files under root (the repository's golden cases), so the fuzzer starts
// from what users write. A missing root yields no lines.
func directiveLines(root string) ([]string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".go" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(src), "\n") {
			i := strings.Index(line, "//")
			if i >= 0 && strings.HasPrefix(strings.TrimLeft(line[i+2:], " \t"), namespace) {
				lines = append(lines, strings.TrimRight(line[i:], "\r"))
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return lines, err
}

func TestDirectiveLinesFindsGoldenDirectives(t *testing.T) {
	root := t.TempDir()
	src := "package p\r\n\n// User is cached.\n//hotkey:cache key=user:{ID}\ntype (\n\t// hotkey:cache key=a:{ID}\n)\n"
	if err := os.MkdirAll(filepath.Join(root, "case"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"case/user.go": src, "case/notes.txt": "//hotkey:cache key=x:{ID}"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := directiveLines(root)
	want := []string{"//hotkey:cache key=user:{ID}", "// hotkey:cache key=a:{ID}"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("directiveLines = %q, %v; want %q", got, err, want)
	}
	if got, err := directiveLines(filepath.Join(root, "missing")); got != nil || err != nil {
		t.Errorf("directiveLines(missing) = %q, %v; want nothing", got, err)
	}
}
