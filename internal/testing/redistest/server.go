package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The server every test starts is chosen by HOTKEYGEN_SERVER, so that one
// test binary serves every row of the matrix:
//
//	(unset), system  the redis-server on the PATH (Debian's, 7.0 on CI)
//	redis-8.0        Redis 8.0, built by scripts/servers
//	valkey-8.1       Valkey 8.1, built by scripts/servers
//
// scripts/servers builds them into HOTKEYGEN_SERVERS (default
// ~/.cache/hotkeygen/servers), outside the repository.
const serverEnv = "HOTKEYGEN_SERVER"

// Servers lists the servers HOTKEYGEN_SERVER names, the system's first.
var Servers = []string{"system", "redis-8.0", "valkey-8.1"}

// ServerName returns the server the tests start, as HOTKEYGEN_SERVER
// names it.
func ServerName() string {
	if s := os.Getenv(serverEnv); s != "" {
		return s
	}
	return "system"
}

// binary returns the path of cmd (redis-server, redis-cli) of the server
// the tests start.
func binary(cmd string) (string, error) {
	name := ServerName()
	if name == "system" {
		bin, err := exec.LookPath(cmd)
		if err != nil {
			return "", errors.New(Install)
		}
		return bin, nil
	}
	known := false
	for _, s := range Servers {
		known = known || s == name
	}
	if !known {
		return "", fmt.Errorf("redistest: %s=%s names no server; known: %s", serverEnv, name, strings.Join(Servers, ", "))
	}
	root := os.Getenv("HOTKEYGEN_SERVERS")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("redistest: no home directory for the server cache; set HOTKEYGEN_SERVERS: %w", err)
		}
		root = filepath.Join(home, ".cache", "hotkeygen", "servers")
	}
	bin := filepath.Join(root, name, "bin", cmd)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("redistest: %s=%s is not built (%s is missing): run `scripts/servers %s`, which .ci/run does", serverEnv, name, bin, name)
	}
	return bin, nil
}
