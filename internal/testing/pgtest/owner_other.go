//go:build !unix

package pgtest

import "os/exec"

// owner is the user that runs the cluster; without Unix users, always
// the one running the tests.
type owner struct{}

func unprivileged(string) (*owner, error) { return nil, nil }

func (*owner) apply(*exec.Cmd) {}
