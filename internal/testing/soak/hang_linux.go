package soak

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stampArrivals asks the kernel to stamp each read of the socket with
// when it received the bytes (SO_TIMESTAMPNS).
func stampArrivals(rc syscall.RawConn) error {
	var err error
	if cerr := rc.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); cerr != nil {
		return cerr
	}
	return err
}

// receive reads what the socket holds into buf, waiting for it, and
// returns the kernel's stamp of its arrival: zero when there is none.
func receive(rc syscall.RawConn, buf []byte) (n int, at time.Time, err error) {
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	var oobn int
	var rerr error
	if cerr := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
		return rerr != unix.EAGAIN
	}); cerr != nil {
		return 0, time.Time{}, cerr
	}
	if n, err = received(n, rerr); err != nil {
		return 0, time.Time{}, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return n, time.Time{}, nil
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			at = time.Unix(ts.Unix())
		}
	}
	return n, at, nil
}
