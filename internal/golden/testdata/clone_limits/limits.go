// Package limits holds parts a clone function cannot copy: each is shared
// with the cached value and reported by -v, and go vet stays quiet about
// the code that copies the rest.
package limits

import (
	"sync"
	"unsafe"
)

// Job is cached with parts that cannot be deep-copied.
//
//hotkey:cache key=job:{ID}
type Job struct {
	ID       int64
	Guard    *sync.Mutex       // a pointer to a lock: shared, never copied
	Stats    *Counters         // a pointer to a struct holding a lock
	ByOwner  map[*Owner]string // pointer keys keep their identity
	Hooks    []func()          `msgpack:"-"` // functions inside a slice, never stored
	Raw      unsafe.Pointer    `msgpack:"-"`
	Steps    []Step
	Optional *any
}

// Counters holds a lock.
type Counters struct {
	mu sync.Mutex
	n  int
}

// Owner is used as a map key.
type Owner struct{ Name string }

// Step is a named struct whose interface field is shared.
type Step struct {
	Name  string
	Input any
	Next  []string
}
