package redistest

import "testing"

// Hang freezes the server (Freeze) for a test: it accepts connections
// and answers nothing, as with a paused VM, a partition that sends no
// reset or a node too busy to answer, until Thaw or the end of t.
func (s *Server) Hang(t testing.TB) {
	t.Helper()
	if err := s.Freeze(); err != nil {
		t.Fatalf("redistest: freeze redis-server on %s: %v", s.Addr, err)
	}
	t.Cleanup(func() { s.Thaw() })
}
