// Package tree has types that reach themselves.
package tree

// Node is a tree node with a sibling list.
//
//hotkey:cache key=node:{ID}
type Node struct {
	ID       int64
	Label    string
	Next     *Node
	Children []*Node
	ByName   map[string]Node
	Chain    List[int]
}

// Dept and Employee reach each other.
//
//hotkey:cache key=dept:{Code}
type Dept struct {
	Code  string
	Staff []Employee
}

// Employee works in a Dept.
type Employee struct {
	Name string
	Dept *Dept
}

// List is a generic linked list: each instance gets a clone function of its
// own.
type List[T any] struct {
	Value T
	Next  *List[T]
}
