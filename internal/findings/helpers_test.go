package findings

import (
	"strings"
	"testing"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// written is what Write prints of list in format f.
func written(t *testing.T, f Format, list annotations.ErrorList) string {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, f, list); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
