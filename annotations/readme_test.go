package annotations

import (
	"fmt"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	declared "github.com/hotkeygen/hotkeygen/internal/option"
)

// readmeOptions reads the option table (docs/options.md): each option it names,
// with the default its row gives it.
func readmeOptions(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../docs/options.md")
	if err != nil {
		t.Fatal(err)
	}
	const header = "| option | meaning | default |"
	_, table, ok := strings.Cut(string(b), "\n"+header+"\n")
	if !ok {
		t.Fatalf("docs/options.md has no table under %q", header)
	}
	defaults := map[string]string{}
	for i, line := range strings.Split(table, "\n") {
		if i == 0 { // |---|---|---|
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Errorf("option row %q has %d cells, want 3", line, len(cells))
			continue
		}
		names, values := strings.Split(strings.TrimSpace(cells[0]), ", "), splitOutsideParens(strings.TrimSpace(cells[2]))
		if len(names) != len(values) {
			t.Errorf("option row %q gives %d defaults for %d options", line, len(values), len(names))
			continue
		}
		for j, name := range names {
			defaults[strings.Trim(name, "`")] = values[j]
		}
	}
	return defaults
}

// splitOutsideParens splits s at each ", " that no parenthesis encloses.
func splitOutsideParens(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '(':
			depth++
		case s[i] == ')':
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], ", "):
			parts = append(parts, s[start:i])
			start = i + len(", ")
		}
	}
	return append(parts, s[start:])
}

// The option table (docs/options.md) lists every option a directive accepts and
// none other, and gives each option the runtime declares its default:
// the value, in any form a directive accepts, with a remark in
// parentheses if need be (200 (at least `top_n`)). An option shaping code
// may state its default in words instead.
// The README counts the options: the count is the declaration's.
func TestTheReadmeCountsTheOptions(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("The %d options", len(OptionNames())); !strings.Contains(string(b), want) {
		t.Errorf("README.md does not say %q", want)
	}
}

func TestTheReadmeOptionTableFollowsTheDeclaration(t *testing.T) {
	documented := readmeOptions(t)
	for name := range documented {
		if !slices.Contains(OptionNames(), name) {
			t.Errorf("the option table (docs/options.md) lists %q, which no directive accepts", name)
		}
	}
	rows := map[string]declared.Row{}
	for _, r := range declared.Rows() {
		rows[r.Name] = r
	}
	for _, name := range OptionNames() {
		doc, ok := documented[name]
		if !ok {
			t.Errorf("the option table (docs/options.md) lacks %q", name)
			continue
		}
		if before, _, remark := strings.Cut(doc, " ("); remark {
			doc = before
		}
		doc = strings.Trim(doc, "`")
		row, runtimeOption := rows[name]
		if !runtimeOption && slices.Contains([]string{"required", "none", "the type's name"}, doc) {
			continue
		}
		spec, want := newSpec(), newSpec()
		if err := options[name].set(&spec, doc, func(int) token.Position { return token.Position{} }); err != nil {
			t.Errorf("docs/options.md gives %s the default %q: %v", name, doc, err)
			continue
		}
		if runtimeOption {
			if got := reflect.ValueOf(spec.Config).FieldByName(row.Field).Interface(); !reflect.DeepEqual(got, row.Default) {
				t.Errorf("docs/options.md gives %s the default %q, which is %v; the runtime declares %v", name, doc, got, row.Default)
			}
		} else if !reflect.DeepEqual(spec, want) {
			t.Errorf("docs/options.md gives %s the default %q, which is not what a directive without it has", name, doc)
		}
	}
}
