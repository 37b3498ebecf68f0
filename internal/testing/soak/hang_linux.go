package soak

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// unread reports whether the socket holds a byte unread, by peeking at
// it without waiting (the runtime asks SIOCINQ; either will do).
func unread(rc syscall.RawConn) (waiting, ok bool) {
	var n int
	var err error
	cerr := rc.Control(func(fd uintptr) {
		n, _, err = unix.Recvfrom(int(fd), make([]byte, 1), unix.MSG_PEEK|unix.MSG_DONTWAIT)
	})
	switch {
	case cerr != nil:
		return false, false
	case err == unix.EAGAIN:
		return false, true
	case err != nil:
		return false, false
	}
	return n > 0, true
}
