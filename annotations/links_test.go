package annotations

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every relative link of the README and of docs/ names a file that exists
// and, with a #fragment, a heading of that file: pages moved or headings
// renamed leave no dead link behind.
func TestDocumentLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if frag != "" && !hasAnchor(string(body), frag) {
				t.Errorf("%s links to %s, whose file has no heading %q", page, target, frag)
			}
		}
	}
}

// hasAnchor reports whether markdown has a heading whose GitHub anchor is
// frag: lower case, punctuation dropped, spaces as hyphens.
func hasAnchor(markdown, frag string) bool {
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for line := range strings.Lines(markdown) {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || !strings.HasPrefix(h, " ") {
			continue
		}
		if strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-") == frag {
			return true
		}
	}
	return false
}
