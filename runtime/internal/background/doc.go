// Package background times a Cache's background work, which needs no key
// or value type: one goroutine ticks (Every) at the period of a Schedule
// and runs whatever is due, and each kind of work that waits on Redis is
// a Job, run on a goroutine of its own, once at a time, so that the tick
// never waits on Redis.
//
// The runtime's background.go says what each tick does; this package,
// when and how, so that each is tested alone.
package background
