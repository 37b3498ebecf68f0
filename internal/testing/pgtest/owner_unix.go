//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// owner is the unprivileged user a root test run gives the cluster to.
type owner struct{ uid, gid uint32 }

// unprivileged gives dir to nobody when the tests run as root, whom
// PostgreSQL refuses, and returns nobody; nil otherwise.
func unprivileged(dir string) (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("pgtest: PostgreSQL refuses to run as root, and there is no user nobody to run it as: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, fmt.Errorf("pgtest: give %s to nobody: %w", dir, err)
	}
	return &owner{uint32(uid), uint32(gid)}, nil
}

// apply makes cmd run as o.
func (o *owner) apply(cmd *exec.Cmd) {
	if o != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: o.uid, Gid: o.gid}}
	}
}
