package generator

import "testing"

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
