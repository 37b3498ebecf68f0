// Package paired runs paired benchmarks: two operations timed in turn on
// every goroutine, so that the machine's noise hits both alike and their
// ratio holds where their absolute times would not.
package paired

import (
	"sync/atomic"
	"testing"
	"time"
)

// Batch is how many calls of one operation run between two readings of
// the clock: enough that the readings cost nothing beside them.
const Batch = 1000

// Parallel runs op and base in alternating batches on b's parallel
// goroutines, b.N calls in all, and returns the time op took over the
// time base took.
func Parallel(b *testing.B, op, base func()) float64 {
	var opNs, baseNs atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for {
			t0 := time.Now()
			for range Batch {
				op()
			}
			t1 := time.Now()
			for range Batch {
				base()
			}
			opNs.Add(int64(t1.Sub(t0)))
			baseNs.Add(int64(time.Since(t1)))
			for range 2 * Batch {
				if !pb.Next() {
					return
				}
			}
		}
	})
	return float64(opNs.Load()) / float64(baseNs.Load())
}

// Serial calls op and base once each per iteration of b, in turns whose
// order alternates too, so neither always goes first, and reports each's
// time per call (as "<opName>-ns/op" and "<baseName>-ns/op") and their
// ratio ("<opName>/<baseName>"): for operations that wait on a server.
func Serial(b *testing.B, opName string, op func(), baseName string, base func()) {
	timed := func(f func()) time.Duration { t0 := time.Now(); f(); return time.Since(t0) }
	var opT, baseT time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			opT += timed(op)
			baseT += timed(base)
		} else {
			baseT += timed(base)
			opT += timed(op)
		}
	}
	b.ReportMetric(float64(opT.Nanoseconds())/float64(b.N), opName+"-ns/op")
	b.ReportMetric(float64(baseT.Nanoseconds())/float64(b.N), baseName+"-ns/op")
	b.ReportMetric(float64(opT)/float64(baseT), opName+"/"+baseName)
}
