//go:build unix

package redistest

import "syscall"

// Freeze stops the server's process (SIGSTOP) and closes nothing: its
// connections stay open, and commands wait unanswered until Thaw
// (SIGCONT), as with a server stalled by the kernel, a paused VM or a
// fork that takes seconds.
func (s *Server) Freeze() error { return s.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server run again: it answers what waited.
func (s *Server) Thaw() error { return s.signal(syscall.SIGCONT) }
