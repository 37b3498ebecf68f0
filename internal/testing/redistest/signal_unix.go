//go:build unix

package redistest

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Freeze stops the server's process (SIGSTOP) and closes nothing: its
// connections stay open, and commands wait unanswered until Thaw
// (SIGCONT), as with a server stalled by the kernel, a paused VM or a
// fork that takes seconds. It returns once the kernel has stopped the
// process (stopped), so that nothing sent after it is answered before
// Thaw.
func (s *Server) Freeze() error {
	if err := s.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	return s.stopped()
}

// Thaw lets a frozen server run again: it answers what waited.
func (s *Server) Thaw() error { return s.signal(syscall.SIGCONT) }

// stopped waits until the process's state in /proc is T: a SIGSTOP
// takes effect when the process next enters the kernel, which on
// another core is a moment after kill returns. Where /proc does not
// say (not Linux), it returns at once.
func (s *Server) stopped() error {
	path := fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		// The state is the field after the command, which ends with ')'.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s not stopped 10s after SIGSTOP", s.Addr)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
