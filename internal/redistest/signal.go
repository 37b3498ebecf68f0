package redistest

import (
	"syscall"
	"testing"
)

// Freeze stops the server's process (SIGSTOP) without closing a
// connection: its clients see a server that accepts connections and
// never answers, as with a paused VM, a partition that sends no reset or
// a node too busy to answer. Thaw (SIGCONT) lets it go on; the freeze is
// ended when t ends, so the server can be stopped.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("redistest: SIGSTOP redis-server on %s: %v", s.Addr, err)
	}
	t.Cleanup(s.Thaw)
}

// Thaw ends a freeze.
func (s *Server) Thaw() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// Terminate asks the server to shut down (SIGTERM), as an init system
// does, and waits for it to exit; Restart brings it back, empty.
func (s *Server) Terminate() error {
	if s.cmd == nil {
		return nil
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	<-s.exited
	s.cmd = nil
	return nil
}

// Exited waits for a server that shut itself down, after SHUTDOWN, and
// reports its exit.
func (s *Server) Exited() error {
	if s.cmd == nil {
		return nil
	}
	err := <-s.exited
	s.cmd = nil
	return err
}
