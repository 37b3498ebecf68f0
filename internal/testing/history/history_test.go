package history

import (
	"slices"
	"testing"
	"time"
	"unsafe"
)

const ms = time.Millisecond

func w(inst int, key, version int64, start, end time.Duration) Op {
	return Op{Kind: Write, Instance: inst, Key: key, Version: version, Start: start, End: end}
}

func r(inst int, key, version int64, start time.Duration) Op {
	return Op{Kind: Read, Instance: inst, Key: key, Version: version, Start: start, End: start + ms, Hot: true}
}

func TestOpIsSmall(t *testing.T) {
	if size := unsafe.Sizeof(Op{}); size > 56 {
		t.Fatalf("an Op takes %d bytes, want 56 at most: a run records millions", size)
	}
}

func ttl(op Op, d time.Duration) Op { op.TTL = d; return op }

func TestCheck(t *testing.T) {
	bound := 50 * ms
	cases := []struct {
		name                    string
		ops                     []Op
		run                     Run
		stale, beyond, ownWrite int
	}{
		{"a read of the newest version is fresh",
			[]Op{w(-1, 1, 1, 0, ms), r(0, 1, 1, 100*ms)}, Run{}, 0, 0, 0},
		{"a stale read within the bound is stale but allowed",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 11*ms+bound-ms)}, Run{}, 1, 0, 0},
		{"a stale read 1 ms past the bound breaks the promise",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 11*ms+bound+ms)}, Run{}, 1, 1, 0},
		{"staleness counts from the earliest newer write, not the newest",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), w(-1, 1, 3, 200*ms, 201*ms), r(0, 1, 1, 202*ms)}, Run{}, 1, 1, 0},
		{"a write still in flight when the read begins binds nothing",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 300*ms), r(0, 1, 1, 200*ms)}, Run{}, 0, 0, 0},
		{"an absent key read after a write is stale",
			[]Op{w(-1, 1, 1, 0, ms), r(0, 1, 0, 100*ms)}, Run{}, 1, 1, 0},
		{"other keys' writes do not matter",
			[]Op{w(-1, 2, 5, 0, ms), r(0, 1, 0, 100*ms)}, Run{}, 0, 0, 0},
		{"a failed write binds nothing",
			[]Op{{Kind: Write, Instance: -1, Key: 1, Version: 1, End: ms, Failed: true}, r(0, 1, 0, 100*ms)}, Run{}, 0, 0, 0},
		{"reading older than your own write is a read-your-writes violation",
			[]Op{w(0, 1, 1, 0, ms), r(0, 1, 0, 2*ms)}, Run{}, 1, 0, 1},
		{"another instance's write within the bound is not",
			[]Op{w(1, 1, 1, 0, ms), r(0, 1, 0, 2*ms)}, Run{}, 1, 0, 0},
		{"reads during an outage are not held to the bound",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms}}}, 0, 0, 0},
		{"nor within the bound after it",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 640*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms}}}, 0, 0, 0},
		{"but they are after that",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 700*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms}}}, 1, 1, 0},
		{"writes before a reset bind nothing after it",
			[]Op{w(-1, 1, 1, 0, ms), r(0, 1, 0, 100*ms)}, Run{Resets: []Reset{{At: 50 * ms}}}, 0, 0, 0},
		{"a read on its way when the data was lost may miss older writes",
			[]Op{w(0, 1, 1, 0, ms), {Kind: Read, Instance: 0, Key: 1, Start: 40 * ms, End: 900 * ms}}, Run{Resets: []Reset{{At: 50 * ms}}}, 0, 0, 0},
		{"a read on its way when Redis went down is an outage read",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), {Kind: Read, Key: 1, Version: 1, Start: 390 * ms, End: 450 * ms}},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms}}}, 0, 0, 0},
		{"an outage of other keys does not spare a read",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Keys: func(k int64) bool { return k != 1 }}}}, 1, 1, 0},
		{"an outage of its key does",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Keys: func(k int64) bool { return k == 1 }}}}, 0, 0, 0},
		{"writes of its keys before an outage that lost them bind nothing after it",
			[]Op{w(-1, 1, 1, 0, ms), r(0, 1, 0, 700*ms)}, Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Lost: true}}}, 0, 0, 0},
		{"writes of other keys do",
			[]Op{w(-1, 1, 1, 0, ms), r(0, 1, 0, 700*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Lost: true, Keys: func(k int64) bool { return k != 1 }}}}, 1, 1, 0},
		{"writes after a reset do",
			[]Op{w(-1, 1, 1, 60*ms, 61*ms), r(0, 1, 0, 200*ms)}, Run{Resets: []Reset{{At: 50 * ms}}}, 1, 1, 0},
		{"a write begun while the command that lost the data was on its way may be lost",
			[]Op{w(0, 1, 1, 60*ms, 61*ms), r(0, 1, 0, 200*ms)}, Run{Resets: []Reset{{At: 50 * ms, Done: 70 * ms}}}, 0, 0, 0},
		{"one begun once it was acknowledged binds",
			[]Op{w(0, 1, 1, 80*ms, 81*ms), r(0, 1, 0, 200*ms)}, Run{Resets: []Reset{{At: 50 * ms, Done: 70 * ms}}}, 1, 1, 1},
		{"a reset of other keys does not free a read",
			[]Op{w(-1, 1, 1, 0, ms), r(0, 1, 0, 100*ms)}, Run{Resets: []Reset{{At: 50 * ms, Keys: func(k int64) bool { return k != 1 }}}}, 1, 1, 0},
		{"reads in a window where Redis answered are still held to the bound",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Answered: true}}}, 1, 1, 0},
		{"another instance's reads in a partition are held to the bound",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Partition: true, Instance: 2}}}, 1, 1, 0},
		{"the cut-off instance's are not, but counted apart",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(2, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Partition: true, Instance: 2}}}, 0, 0, 0},
		{"until the bound after the partition healed",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(2, 1, 1, 700*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Partition: true, Instance: 2}}}, 1, 1, 0},
		{"a hang the checker found spares reads as an outage does",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 500*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Hung: true}}}, 0, 0, 0},
		{"until the bound after Redis answered again",
			[]Op{w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), r(0, 1, 1, 700*ms)},
			Run{Outages: []Window{{From: 400 * ms, To: 600 * ms, Hung: true}}}, 1, 1, 0},
		{"a version read after its TTL ran out is stale",
			[]Op{ttl(w(-1, 1, 1, 0, ms), 100*ms), r(0, 1, 1, 101*ms+bound+ms)}, Run{}, 1, 1, 0},
		{"within the bound after the expiry it is allowed",
			[]Op{ttl(w(-1, 1, 1, 0, ms), 100*ms), r(0, 1, 1, 101*ms+bound-ms)}, Run{}, 1, 0, 0},
		{"an older version read after the expiry is stale from the expiry",
			[]Op{w(-1, 1, 1, 0, ms), ttl(w(-1, 1, 2, 10*ms, 11*ms), 100*ms), r(0, 1, 1, 200*ms)}, Run{}, 1, 1, 0},
		{"the key read absent once it may have expired is fresh",
			[]Op{ttl(w(-1, 1, 1, 0, 30*ms), 100*ms), r(0, 1, 0, 100*ms)}, Run{}, 0, 0, 0},
		{"but not before",
			[]Op{ttl(w(-1, 1, 1, 0, ms), 100*ms), r(0, 1, 0, 60*ms)}, Run{}, 1, 1, 0},
		{"a write before the TTL runs out cancels the expiry",
			[]Op{ttl(w(-1, 1, 1, 0, ms), 100*ms), w(-1, 1, 2, 50*ms, 51*ms), r(0, 1, 2, 300*ms), r(0, 1, 0, 300*ms)}, Run{}, 1, 1, 0},
		{"a write that may have come before the expiry spares the version it overwrote",
			[]Op{ttl(w(-1, 1, 1, 0, 30*ms), 100*ms), w(-1, 1, 2, 110*ms, 300*ms), r(0, 1, 1, 200*ms)}, Run{}, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run.Bound = bound
			rep := Check(Merge(&Log{Ops: c.ops}), c.run)
			if len(rep.Stale) != c.stale || len(rep.BeyondBound) != c.beyond || len(rep.OwnWrites) != c.ownWrite {
				t.Fatalf("stale %d beyond %d own %d; want %d %d %d\n%s", len(rep.Stale), len(rep.BeyondBound), len(rep.OwnWrites),
					c.stale, c.beyond, c.ownWrite, rep.Summary(5))
			}
		})
	}
}

func TestAvailability(t *testing.T) {
	const down, up = true, false
	cold := func(start, took time.Duration, failed bool) Op {
		return Op{Kind: Read, Key: 99, Start: start, End: start + took, Failed: failed}
	}
	hot := r(0, 1, 0, 150*ms)
	failedHot := hot
	failedHot.Start, failedHot.Failed = 160*ms, true
	ops := Merge(&Log{Ops: []Op{
		hot, failedHot,
		cold(110*ms, 300*ms, down), // the first failure: slow
		cold(420*ms, 50*time.Microsecond, down),
		cold(430*ms, 2*ms, down), // slow after the first failure
		cold(700*ms, ms, up),     // recovered 200 ms after the outage
	}})
	rep := Check(ops, Run{Bound: 50 * ms, Outages: []Window{{From: 100 * ms, To: 500 * ms}}})
	if rep.OutageHotReads != 2 || rep.OutageHotServed != 1 {
		t.Fatalf("hot reads %d served %d; want 2, 1", rep.OutageHotReads, rep.OutageHotServed)
	}
	if want := []time.Duration{50 * time.Microsecond, 2 * ms}; !slices.Equal(rep.ColdFailures, want) {
		t.Fatalf("cold failures after the first = %v, want %v", rep.ColdFailures, want)
	}
	if rep.ColdFailure(1) != 2*ms {
		t.Fatalf("slowest cold failure after the first = %v, want 2ms", rep.ColdFailure(1))
	}
	if want := []Recovery{{Instance: 0, After: 200 * ms}}; !slices.Equal(rep.Recovery, want) {
		t.Fatalf("recovery %v, want %v", rep.Recovery, want)
	}
}

// Each kind of reader's reads in an outage are counted apart, hot and
// cold: how many, served, served within Prompt, and how long each took.
func TestReadsInAnOutageAreCountedByReader(t *testing.T) {
	read := func(hot bool, rd Reader, start, took time.Duration, failed bool) Op {
		return Op{Kind: Read, Hot: hot, Reader: rd, Key: 1, Start: start, End: start + took, Failed: failed}
	}
	ops := Merge(&Log{Ops: []Op{
		read(true, Busy, 150*ms, ms, false),
		read(true, Busy, 160*ms, 60*ms, false), // served, not within Prompt
		read(true, Idle, 200*ms, Prompt, false),
		read(true, Idle, 210*ms, 2*ms, true),
		read(false, First, 99*ms, 120*ms, true), // on its way as the outage began
		read(false, Busy, 300*ms, 10*time.Microsecond, true),
		read(true, Busy, 900*ms, ms, false), // after the outage: not counted
	}})
	rep := Check(ops, Run{Bound: 50 * ms, Outages: []Window{{From: 100 * ms, To: 500 * ms}}})
	for _, c := range []struct {
		name                  string
		got                   Took
		reads, served, within int
		slowest               time.Duration
	}{
		{"busy hot", rep.Hot[Busy], 2, 2, 1, 60 * ms},
		{"idle hot", rep.Hot[Idle], 2, 1, 1, Prompt},
		{"in-flight cold", rep.Cold[First], 1, 0, 0, 120 * ms},
		{"busy cold", rep.Cold[Busy], 1, 0, 0, 10 * time.Microsecond},
		{"in-flight hot", rep.Hot[First], 0, 0, 0, 0},
	} {
		if c.got.Reads != c.reads || c.got.Served != c.served || c.got.Within != c.within || c.got.Quantile(1) != c.slowest {
			t.Errorf("%s: %d reads, %d served, %d within %v, slowest %v; want %d, %d, %d, %v",
				c.name, c.got.Reads, c.got.Served, c.got.Within, Prompt, c.got.Quantile(1), c.reads, c.served, c.within, c.slowest)
		}
	}
}

// TestOnlyKeysTheWorkloadHeatedAreJudgedHot: with Run.Heated, a read of a
// key its instance did not read twice hot_qps times in the second before
// the outage is judged neither hot nor cold.
func TestOnlyKeysTheWorkloadHeatedAreJudgedHot(t *testing.T) {
	const qps = 10 // twice that in the second before: 20 reads
	outage := Window{From: 2 * time.Second, To: 3 * time.Second}
	// reads returns n reads of key by inst spread over [from, from+1s).
	reads := func(inst int, key int64, from time.Duration, n int) []Op {
		var ops []Op
		for i := range n {
			ops = append(ops, r(inst, key, 0, from+time.Duration(i)*(time.Second/time.Duration(n))))
		}
		return ops
	}
	cases := []struct {
		name   string
		before []Op // reads before the outage
		hot    bool // the failed read of key 1 by instance 0 is judged hot
	}{
		{"read twice hot_qps times in the second before", reads(0, 1, time.Second, 20), true},
		{"one read short", reads(0, 1, time.Second, 19), false},
		{"read only before that second", reads(0, 1, 0, 100), false},
		{"read by another instance", reads(1, 1, time.Second, 20), false},
		{"another key read as often", reads(0, 2, time.Second, 20), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			failed := r(0, 1, 0, 2500*ms)
			failed.Failed = true
			ops := Merge(&Log{Ops: append(slices.Clone(tc.before), failed)})
			run := Run{Bound: 50 * ms, Outages: []Window{outage}}
			run.Heated = HeatedBefore(ops, run.Outages, qps)
			rep := Check(ops, run)
			hot, unheated := 0, 1
			if tc.hot {
				hot, unheated = 1, 0
			}
			if rep.OutageHotReads != hot || rep.OutageHotServed != 0 || rep.OutageUnheated != unheated {
				t.Fatalf("hot reads %d (served %d), unheated %d; want %d (0), %d", rep.OutageHotReads, rep.OutageHotServed, rep.OutageUnheated, hot, unheated)
			}
		})
	}
}

// A hang the checker found (Window.Hung) frees reads from the bound but
// is not judged for availability: its reads count in no outage figure,
// and no instance owes it a recovery.
func TestAHangIsNotJudgedForAvailability(t *testing.T) {
	failedHot := r(0, 1, 0, 450*ms)
	failedHot.Failed = true
	failedCold := Op{Kind: Read, Key: 99, Start: 460 * ms, End: 470 * ms, Failed: true}
	rep := Check(Merge(&Log{Ops: []Op{failedHot, failedCold}}), Run{Bound: 50 * ms, Outages: []Window{{From: 400 * ms, To: 600 * ms, Hung: true}}})
	if rep.OutageHotReads != 0 || rep.OutageColdFailed != 0 || len(rep.Recovery) != 0 || rep.Hot[Busy].Reads != 0 {
		t.Fatalf("hot reads %d, cold failures %d, recoveries %v, busy hot %d; want none judged", rep.OutageHotReads, rep.OutageColdFailed, rep.Recovery, rep.Hot[Busy].Reads)
	}
	if rep.FailedReads != 2 {
		t.Fatalf("failed reads %d, want 2", rep.FailedReads)
	}
}

func TestRecoveryIsPerInstance(t *testing.T) {
	cold := func(inst int, start time.Duration, failed bool) Op {
		return Op{Kind: Read, Instance: inst, Key: 99, Start: start, End: start + ms, Failed: failed}
	}
	outages := []Window{{From: 100 * ms, To: 500 * ms}, {From: 600 * ms, To: 700 * ms, Partition: true, Instance: 1}}
	ops := Merge(&Log{Ops: []Op{
		cold(0, 510*ms, false), cold(1, 550*ms, false), cold(2, 560*ms, true), // 2 never reads again
		cold(1, 720*ms, true), cold(0, 730*ms, false), cold(1, 750*ms, false), // only 1 was cut off in the second
	}})
	rep := Check(ops, Run{Bound: 50 * ms, Outages: outages})
	want := []Recovery{
		{Outage: 0, Instance: 0, After: 10 * ms}, {Outage: 0, Instance: 1, After: 50 * ms}, {Outage: 0, Instance: 2, Never: true},
		{Outage: 1, Instance: 1, After: 50 * ms},
	}
	if !slices.Equal(rep.Recovery, want) {
		t.Fatalf("recovery\n%v\nwant\n%v", rep.Recovery, want)
	}
}

func TestPartitionedReadsAreCountedApart(t *testing.T) {
	ops := Merge(&Log{Ops: []Op{
		w(-1, 1, 1, 0, ms), w(-1, 1, 2, 10*ms, 11*ms), w(-1, 1, 3, 300*ms, 301*ms),
		r(2, 1, 1, 400*ms), r(2, 1, 2, 500*ms), r(2, 1, 3, 550*ms), // cut off: two stale, by 389 and 199 ms
		r(0, 1, 3, 500*ms), // another instance, fresh
	}})
	rep := Check(ops, Run{Bound: 50 * ms, Outages: []Window{{From: 350 * ms, To: 600 * ms, Partition: true, Instance: 2}}})
	if len(rep.Stale) != 0 || len(rep.Partitioned) != 2 {
		t.Fatalf("stale %d, partitioned %d; want 0, 2", len(rep.Stale), len(rep.Partitioned))
	}
	if want := []time.Duration{199 * ms, 389 * ms}; !slices.Equal(rep.PartitionAge, want) || rep.PartitionQuantile(1) != 389*ms {
		t.Fatalf("ages %v, want %v", rep.PartitionAge, want)
	}
	if rep.OutageHotReads != 3 || rep.OutageHotServed != 3 {
		t.Fatalf("hot reads in the partition %d, served %d; want 3, 3 (the cut-off instance's)", rep.OutageHotReads, rep.OutageHotServed)
	}
}
