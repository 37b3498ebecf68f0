package generator

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ChangeKind says how a file on disk differs from what was generated.
type ChangeKind int

const (
	Missing     ChangeKind = iota // generated, not on disk
	Stale                         // on disk with other content
	Superfluous                   // on disk, but its package has no annotations left
)

func (k ChangeKind) String() string {
	switch k {
	case Missing:
		return "missing"
	case Stale:
		return "stale"
	case Superfluous:
		return "superfluous"
	}
	return fmt.Sprintf("ChangeKind(%d)", int(k))
}

// Change is one file to write or remove.
type Change struct {
	Path string // absolute
	Kind ChangeKind
}

// Changes compares r with the disk and returns what differs, sorted by
// path. A file whose content is already right is not a change, so it is
// never rewritten and its modification time stays.
func (r *Result) Changes() ([]Change, error) {
	var changes []Change
	for path, content := range r.Files {
		old, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, Change{path, Missing})
		case err != nil:
			return nil, err
		case !bytes.Equal(old, content):
			changes = append(changes, Change{path, Stale})
		}
	}
	for _, path := range r.Remove {
		changes = append(changes, Change{path, Superfluous})
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, nil
}

// Write brings the disk in line with r and returns what it changed.
// A file is removed only if it still starts with Header: a file someone
// replaced since the packages were loaded is theirs.
func (r *Result) Write() ([]Change, error) {
	changes, err := r.Changes()
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		switch c.Kind {
		case Missing, Stale:
			err = os.WriteFile(c.Path, r.Files[c.Path], 0o666)
		case Superfluous:
			if outputStateOf(c.Path) == ourOutput {
				err = os.Remove(c.Path)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return changes, nil
}
