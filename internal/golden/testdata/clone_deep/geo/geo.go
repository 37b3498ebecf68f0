// Package geo is another package whose struct keeps a private reference.
package geo

// Place is a named place. Its cache belongs to this package, which the
// generated code cannot reach into.
type Place struct {
	Name  string
	Tags  []string
	cache map[string]int
}

// NewPlace returns a Place with an empty cache.
func NewPlace(name string, tags ...string) Place {
	return Place{Name: name, Tags: tags, cache: map[string]int{}}
}

// Cached returns the number of entries in p's cache.
func (p *Place) Cached() int { return len(p.cache) }
