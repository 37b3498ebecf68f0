package track

import (
	"slices"
	"sync/atomic"
)

// Nodes says which node covers a key: the one node of a single server,
// of Pub/Sub and of invalidation off, or on a cluster with tracking the
// master that owns the key's slot, as the hub last read the topology.
type Nodes struct {
	One   *Node
	slots atomic.Pointer[[SlotCount]*Node] // nil unless a cluster's topology is followed
}

// Of returns the node that covers key.
func (s *Nodes) Of(key string) *Node {
	if t := s.slots.Load(); t != nil {
		return t[HashSlot(key)]
	}
	return s.One
}

// Followed reports whether a cluster's topology has been read once.
func (s *Nodes) Followed() bool { return s.slots.Load() != nil }

// All returns every node keys are on now, each once: the masters that own
// slots on a cluster, and the one node otherwise or for slots no master
// owns.
func (s *Nodes) All() []*Node {
	t := s.slots.Load()
	if t == nil {
		return []*Node{s.One}
	}
	var out []*Node
	for i, n := range t {
		if i > 0 && n == t[i-1] || slices.Contains(out, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}
