// Package ids holds identifier types shared by several services.
package ids

// Shard numbers a partition of the data.
type Shard uint16
