//go:build hotkeygen_bench

package main

import hk "github.com/hotkeygen/hotkeygen/runtime"

// hotkeygen (pipeline) sends every read of one key on the automatic
// pipeline, never on the pool's lane: the reference of the lane's
// median, built with the hotkeygen_bench tag only, as the runtime's
// option is.
func init() {
	systems = append(systems, systemInfo{"hotkeygen-pipeline", "hotkeygen (pipeline)", func(s Setup) (System, error) {
		return newHotkeygen(s, hk.WithEveryReadPiped())
	}})
}
