package redistest

import (
	"fmt"
	"os"
)

// RunWithServer runs run, the package's tests (m.Run), with a
// redis-server whose address it stores in *addr first: for godoc
// examples, which take no *testing.T to start one of their own. It
// returns run's exit code, 1 when no server could be started.
func RunWithServer(addr *string, run func() int) int {
	srv, err := Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Stop()
	*addr = srv.Addr
	return run()
}
