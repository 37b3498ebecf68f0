package findings

import (
	"go/token"
	"testing"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// A workflow command ends at a line break, and its properties at ',' and
// ':': GitHub's runner unescapes what actions/toolkit escapes, and an
// unescaped '%' would be read as the start of an escape.
func TestGitHubCommandsEscapeWhatWouldEndThem(t *testing.T) {
	for _, tt := range []struct {
		name string
		e    annotations.Error
		want string
	}{{
		name: "a message's '%', CR and LF",
		e:    annotations.Error{Pos: token.Position{Filename: "a.go", Line: 1, Column: 2}, Rule: annotations.RuleUnparsableValue, Msg: "5% off\r\nthe next line"},
		want: "::error file=a.go,line=1,col=2,title=UNPARSABLE_VALUE::5%25 off%0D%0Athe next line",
	}, {
		name: "a message's ',' and ':' are left alone",
		e:    annotations.Error{Pos: token.Position{Filename: "a.go", Line: 1, Column: 2}, Rule: annotations.RuleUnparsableValue, Msg: "a, b: c"},
		want: "::error file=a.go,line=1,col=2,title=UNPARSABLE_VALUE::a, b: c",
	}, {
		name: "a file's ',', ':', '%' and line break",
		e:    annotations.Error{Pos: token.Position{Filename: "x,y:z%\n.go", Line: 1}, Rule: annotations.RuleStaleFile, Msg: "stale"},
		want: "::error file=x%2Cy%3Az%25%0A.go,line=1,title=STALE_FILE::stale",
	}, {
		name: "a warning, its message without warning:",
		e:    annotations.Error{Pos: token.Position{Filename: "a.go", Line: 3, Column: 1}, Rule: annotations.RuleDirectiveMisspelt, Msg: "warning: ignored"},
		want: "::warning file=a.go,line=3,col=1,title=DIRECTIVE_MISSPELT::ignored",
	}, {
		name: "a finding of a whole file: no line, no column",
		e:    annotations.Error{Pos: token.Position{Filename: "a/hotkey_gen.go"}, Rule: annotations.RuleMissingFile, Msg: "missing"},
		want: "::error file=a/hotkey_gen.go,title=MISSING_FILE::missing",
	}, {
		name: "a finding of the whole run: no file",
		e:    annotations.Error{Rule: annotations.RuleRunFailed, Msg: "no packages match ./..."},
		want: "::error title=RUN_FAILED::no packages match ./...",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := written(t, GitHub, annotations.ErrorList{&tt.e}); got != tt.want+"\n" {
				t.Errorf("got  %q\nwant %q", got, tt.want+"\n")
			}
		})
	}
}

// The JSON format is one document whatever was found, its positions left
// out where unknown, its strings escaped as JSON's and no more: messages
// quote Go code, whose '<', '>' and '&' a reader should see as written.
func TestJSONIsOneDocument(t *testing.T) {
	for _, tt := range []struct {
		name string
		list annotations.ErrorList
		want string
	}{{
		name: "nothing found: an empty list",
		want: "{\n  \"findings\": []\n}\n",
	}, {
		name: "a finding of the whole run, and one quoting Go code",
		list: annotations.ErrorList{
			{Rule: annotations.RuleRunFailed, Msg: "no packages match ./..."},
			{Pos: token.Position{Filename: "a.go", Line: 4, Column: 2}, Rule: annotations.RuleLockInValue, Msg: "warning: a <-chan & \"x\"\n"},
		},
		want: `{
  "findings": [
    {
      "severity": "error",
      "rule": "RUN_FAILED",
      "message": "no packages match ./..."
    },
    {
      "file": "a.go",
      "line": 4,
      "column": 2,
      "severity": "warning",
      "rule": "LOCK_IN_VALUE",
      "message": "a <-chan & \"x\"\n"
    }
  ]
}
`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := written(t, JSON, tt.list); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// The text format is the Go tools': file:line:col: message, a line each,
// and nothing for nothing.
func TestTextIsALineAFinding(t *testing.T) {
	list := annotations.ErrorList{
		{Pos: token.Position{Filename: "a.go", Line: 1, Column: 2}, Rule: annotations.RuleUnknownOption, Msg: "unknown option"},
		{Rule: annotations.RuleRunFailed, Msg: "no packages match ./..."},
	}
	for _, tt := range []struct {
		name string
		list annotations.ErrorList
		want string
	}{
		{"nothing found", nil, ""},
		{"a finding at a position, and one of the whole run", list, "a.go:1:2: unknown option\nno packages match ./...\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := written(t, Text, tt.list); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string
	}{
		{in: "text", want: "text"},
		{in: "json", want: "json"},
		{in: "github", want: "github"},
		{in: "JSON", err: `unknown format "JSON"; use text, json or github`},
		{in: "", err: `unknown format ""; use text, json or github`},
	} {
		got, err := ParseFormat(tt.in)
		if string(got) != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}
