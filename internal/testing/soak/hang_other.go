//go:build !linux

package soak

import (
	"syscall"
	"time"
)

// stampArrivals cannot ask for stamps here: no hang is proved, and none
// is forgiven.
func stampArrivals(syscall.RawConn) error { return nil }

// receive reads what the socket holds into buf, with no stamp.
func receive(rc syscall.RawConn, buf []byte) (n int, at time.Time, err error) {
	var rerr error
	if cerr := rc.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), buf)
		return rerr != syscall.EAGAIN
	}); cerr != nil {
		return 0, time.Time{}, cerr
	}
	n, err = received(n, rerr)
	return n, time.Time{}, err
}
