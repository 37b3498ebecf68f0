// Package track is the invalidation transport: how a write on any
// instance, or by any other writer, reaches the process. It needs neither
// a key nor a value type.
//
// A Hub is the transport of one client, shared by every repository on
// it: one invalidation session per node while copies of its keys are kept
// (CLIENT TRACKING for the keys of the copies kept, on a cluster on the
// key's master and its replicas, or a subscription to the repositories'
// Pub/Sub channels), whose stamped PINGs vouch for the node and tell
// whether it answers; one breaker per node; and on a cluster, the
// topology read and followed. The repositories' copies are a Store: the hub tells it which
// keys changed, when a session starts, and when slots move. Whether a
// copy may be served is the Store's business (the runtime's freshness
// protocol), decided against the Node's state and vouched stamp.
package track
