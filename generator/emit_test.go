package generator

import (
	"slices"
	"testing"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		width int
		want  []string
	}{{
		name: "short text stays on one line",
		text: "Stats returns a snapshot.", width: 40,
		want: []string{"Stats returns a snapshot."},
	}, {
		name: "lines break between words",
		text: "one two three four", width: 9,
		want: []string{"one two", "three", "four"},
	}, {
		name: "a word longer than the width gets its own line",
		text: "a verylongword b", width: 5,
		want: []string{"a", "verylongword", "b"},
	}, {
		name: "a newline starts a new line",
		text: "first\nsecond", width: 40,
		want: []string{"first", "second"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrap(tt.text, tt.width); !slices.Equal(got, tt.want) {
				t.Errorf("wrap = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePos(t *testing.T) {
	tests := []struct {
		in        string
		file      string
		line, col int
	}{
		{"/a/b.go:3:7", "/a/b.go", 3, 7},
		{"/a/b.go:3", "/a/b.go", 3, 0},
		{"/a/b.go", "/a/b.go", 0, 0},
		{"C:/a/b.go:3:7", "C:/a/b.go", 3, 7},
		{"", "", 0, 0},
		{"-", "", 0, 0},
	}
	for _, tt := range tests {
		p := parsePos(tt.in)
		if p.Filename != tt.file || p.Line != tt.line || p.Column != tt.col {
			t.Errorf("parsePos(%q) = %q %d %d; want %q %d %d", tt.in, p.Filename, p.Line, p.Column, tt.file, tt.line, tt.col)
		}
	}
}

func TestKeySpecial(t *testing.T) {
	tests := []struct {
		name string
		lits []string // the template's literal parts
		want string
	}{
		{"a colon separates the parts", []string{"acct:", ":"}, "%:"},
		{"a slash", []string{"user/"}, "%/"},
		{"every punctuation byte, once, sorted", []string{"a-b.", "|", "-", " "}, " %-.|"},
		{"letters and digits are not escaped", []string{"v2x"}, "%"},
		{"a percent sign is there anyway", []string{"%"}, "%"},
		{"nor are bytes beyond ASCII", []string{"ключ:"}, "%:"},
		{"no literal text", nil, "%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &entity{}
			for _, l := range tt.lits {
				e.Key = append(e.Key, keyPart{Lit: l}, keyPart{Param: &param{Kind: keyString}})
			}
			if got := keySpecial(e); got != tt.want {
				t.Errorf("keySpecial(%q) = %q, want %q", tt.lits, got, tt.want)
			}
		})
	}
}
