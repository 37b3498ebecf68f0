//go:build !linux

package breaker

import "syscall"

// unread cannot tell on this system: reads that time out are trusted.
func unread(syscall.RawConn) (int, bool) { return 0, false }
