//go:build !unix

package redistest

import "errors"

// Freeze needs SIGSTOP, which this system does not have.
func (s *Server) Freeze() error { return errors.ErrUnsupported }

// Thaw needs SIGCONT, which this system does not have.
func (s *Server) Thaw() error { return errors.ErrUnsupported }
