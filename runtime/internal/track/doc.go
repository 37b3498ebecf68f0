// Package track is the invalidation transport's part that needs neither
// a key nor a value type: which cluster hash slot a key is in, which node
// of a cluster owns which slots, and the options of the connections the
// runtime opens to a node besides the caller's.
package track
