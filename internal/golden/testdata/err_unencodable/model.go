package model

import "unsafe"

// Job has fields msgpack cannot encode, even nil and omitempty.
//
//hotkey:cache key=job:{ID}
type Job struct {
	ID      int64
	Done    func() `msgpack:",omitempty"`
	Events  chan string
	Ptr     unsafe.Pointer
	Phase   complex128
	Addr    uintptr
	Steps   []Step
	ByName  map[string]*Step
	Skipped func()   `msgpack:"-"` // left out of the value: fine
	hidden  chan int // unexported, so never stored: fine
	Any     any      // its dynamic value decides: fine
}

// Step holds a function deep inside.
type Step struct {
	Name string
	Run  func() error
}
