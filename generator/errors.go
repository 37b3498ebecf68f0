package generator

import (
	"go/token"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// Error is one problem that stops generation, at the source position that
// caused it when there is one; it is the annotations package's type, so
// directive and generator problems sort and print alike.
type Error = annotations.Error

// ErrorList is every problem found in one run, sorted by position, so one
// run shows the user everything to fix. Generate returns it when non-empty.
type ErrorList = annotations.ErrorList

// tokenFile positions a problem with a whole file.
func tokenFile(path string) token.Position {
	return token.Position{Filename: path}
}
