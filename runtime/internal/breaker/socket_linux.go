package breaker

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// unread returns how many bytes the socket holds unread (SIOCINQ).
func unread(rc syscall.RawConn) (n int, ok bool) {
	var err error
	cerr := rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return n, cerr == nil && err == nil
}
