package reads

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/internal/breaker"
	"github.com/hotkeygen/hotkeygen/runtime/internal/group"
	"github.com/hotkeygen/hotkeygen/runtime/internal/layout"
)

// A batch of 1,200 keys is one pipeline of three MGETs, with a PTTL per
// key whose copy the caller keeps when the entity learns TTLs: each key's
// bytes, nil where Redis has none, and the expiry of a copy of each kept
// (layout.Unasked for the others).
func TestManyReadsABatchInOnePipeline(t *testing.T) {
	everyOther := func(i int) bool { return i%2 == 0 }
	for _, c := range []struct {
		name string
		ttl  bool
		keep func(i int) bool // nil: every key
	}{
		{"no TTL", false, nil},
		{"TTL, every copy kept", true, nil},
		{"TTL, every other copy kept", true, everyOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.ttl)
			ctx := context.Background()
			keys := make([]string, 1200)
			var keep []bool
			if c.keep != nil {
				keep = make([]bool, len(keys))
			}
			kept := func(i int) bool { return c.ttl && (keep == nil || keep[i]) }
			want := map[string]int{"mget": 3}
			for i := range keys {
				keys[i] = "k:" + strconv.Itoa(i)
				if i%3 != 0 { // every third is absent
					e.rdb.Set(ctx, keys[i], "v"+strconv.Itoa(i), time.Hour)
				}
				if keep != nil {
					keep[i] = c.keep(i)
				}
				if kept(i) {
					want["pttl"]++
				}
			}
			e.hook.take()
			vals, exps, errs := e.r.Many(ctx, keys, keep)
			if errs != nil {
				t.Fatalf("errors: %v", FirstError(errs))
			}
			pipes, cmds := e.hook.take()
			if pipes != 1 || len(cmds) != len(want) || cmds["mget"] != 3 || cmds["pttl"] != want["pttl"] {
				t.Fatalf("%d pipelines with %v; want one with %v", pipes, cmds, want)
			}
			for i, k := range keys {
				switch {
				case i%3 == 0 && vals[i] != nil:
					t.Fatalf("%s, absent, read %q", k, vals[i])
				case i%3 != 0 && string(vals[i]) != "v"+strconv.Itoa(i):
					t.Fatalf("%s read %q", k, vals[i])
				case kept(i) != (exps.Of(i) > 0) && i%3 != 0:
					t.Fatalf("%s: expiry %d, kept %v", k, exps.Of(i), kept(i))
				case c.ttl && !kept(i) && exps.Of(i) != layout.Unasked:
					t.Fatalf("%s, not kept: expiry %d, want Unasked", k, exps.Of(i))
				}
			}
		})
	}
}

// The keys of a node that fails fail, each with an operation's error,
// counted and handed to the breaker, which opens (or refused, when it
// opened while the batch waited); while it is open, the next batch is
// refused without a command.
func TestManyFailsWithItsNode(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	e.srv.Kill()
	keys := []string{"k:1", "k:2"}
	_, _, errs := e.r.Many(ctx, keys, nil)
	for i, err := range errs {
		if err == nil || !strings.HasPrefix(err.Error(), `hotkey: get "`+keys[i]+`": `) {
			t.Fatalf("key %d failed with %v, want an operation's error naming it", i, err)
		}
	}
	if e.counts.Load()+e.refused.Load() == 0 {
		t.Fatal("the failure was neither counted nor refused")
	}
	if !e.r.Nodes.One.Unreachable() {
		t.Fatal("the breaker is closed after the node failed")
	}
	e.hook.take()
	_, _, errs = e.r.Many(ctx, keys, nil)
	if pipes, _ := e.hook.take(); pipes != 0 {
		t.Fatalf("%d pipelines sent to a node found down", pipes)
	}
	if !errors.Is(FirstError(errs), errUnavailable) {
		t.Fatalf("error %v; want the batch refused as unavailable", FirstError(errs))
	}
}

// Ask reads one key through its node's breaker: a missing key is
// Missing, a failure opens the breaker (counted, or refused when it opened
// while the read waited), and then a read is refused at once, unless
// patient.
func TestAsk(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	get := func(key string) func(context.Context) error {
		return func(ctx context.Context) error { return e.rdb.Get(ctx, key).Err() }
	}
	e.rdb.Set(ctx, "k:1", "v", 0)
	if err := e.r.Ask(ctx, "k:1", false, get("k:1")); err != nil {
		t.Fatalf("a present key: %v", err)
	}
	if err := e.r.Ask(ctx, "k:2", false, get("k:2")); err != errMissing {
		t.Fatalf("a missing key: %v, want Missing", err)
	}
	if e.counts.Load() != 0 {
		t.Fatal("a missing key counted as a failure")
	}
	e.srv.Kill()
	if err := e.r.Ask(ctx, "k:1", false, get("k:1")); err == nil || e.counts.Load()+e.refused.Load() != 1 {
		t.Fatalf("a read of a killed node: %v, counted %d, refused %d", err, e.counts.Load(), e.refused.Load())
	}
	if !e.r.Nodes.One.Unreachable() {
		t.Fatal("the breaker is closed after the node failed")
	}
	asked := false
	if err := e.r.Ask(ctx, "k:1", false, func(context.Context) error { asked = true; return nil }); !errors.Is(err, errUnavailable) || asked {
		t.Fatalf("a read while the node is down: %v, sent %v; want refused unsent", err, asked)
	}
	if err := e.r.Ask(ctx, "k:1", true, func(context.Context) error { asked = true; return nil }); err != nil || !asked {
		t.Fatalf("a patient read while the node is down: %v, sent %v; want sent", err, asked)
	}
}

// A batch with a copy of one of its keys is given up when the breaker of
// that key's node opens, with the refusal of the first key with a copy;
// without copies, it is Many, failing with the first error. A Cache that
// closed reads nothing.
func TestManyUntilOpened(t *testing.T) {
	e, g, keys := newBatchEnv(t)
	ctx := context.Background()
	raw, _, err := e.r.ManyUntilOpened(ctx, g, keys, []bool{false, false}, nil)
	if err != nil || raw[0] != nil || string(raw[1]) != "v2" {
		t.Fatalf("without copies: %q, %v", raw, err)
	}
	e.srv.Hang(t)
	start := time.Now()
	_, _, err = e.r.ManyUntilOpened(ctx, g, keys, []bool{false, true}, nil)
	if !errors.Is(err, errUnavailable) || !strings.HasPrefix(err.Error(), `hotkey: get "k:2": `) {
		t.Fatalf("with a copy of k:2 and its node hung: %v, want k:2 refused as unavailable", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("waited %v on a hung node, past its breaker opening", waited)
	}
	var closed group.Group
	closed.Close()
	if _, _, err := e.r.ManyUntilOpened(ctx, &closed, keys, []bool{true, true}, nil); !errors.Is(err, errClosed) {
		t.Fatalf("after Close: %v, want Closed", err)
	}
}

// Patient sends a batch to a node whose breaker is open, which Many
// refuses without a command, and waits for it within its bound: a hung
// node fails each key with breaker.NoAnswer, and the batch goes on
// without its caller.
func TestPatient(t *testing.T) {
	e, g, keys := newBatchEnv(t)
	ctx := context.Background()
	e.hold() // nothing but the test decides the breaker
	e.r.Nodes.One.Judge(errors.New("test: the node was slow"), time.Now())
	e.hook.take()
	if _, _, errs := e.r.Many(ctx, keys, nil); !errors.Is(FirstError(errs), errUnavailable) {
		t.Fatalf("Many with the breaker open: %v, want refused", FirstError(errs))
	}
	if pipes, _ := e.hook.take(); pipes != 0 {
		t.Fatalf("Many sent %d pipelines with the breaker open", pipes)
	}
	raw, _, errs := e.r.Patient(ctx, g, keys, time.Minute)
	if errs != nil || raw[0] != nil || string(raw[1]) != "v2" {
		t.Fatalf("Patient with the breaker open: %q, %v; want the values", raw, FirstError(errs))
	}

	e.srv.Hang(t)
	_, _, errs = e.r.Patient(ctx, g, keys, 50*time.Millisecond)
	if errs == nil {
		t.Fatal("a hung node's batch succeeded")
	}
	for i, err := range errs {
		var none breaker.NoAnswer
		if !errors.As(err, &none) || !strings.HasPrefix(err.Error(), `hotkey: get "`+keys[i]+`": `) {
			t.Fatalf("key %d of a hung node: %v, want an operation's error of no answer", i, err)
		}
	}

	var closed group.Group
	closed.Close()
	if _, _, errs := e.r.Patient(ctx, &closed, keys, time.Minute); !errors.Is(FirstError(errs), errClosed) {
		t.Fatalf("after Close: %v, want Closed", FirstError(errs))
	}
}
