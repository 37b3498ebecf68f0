package throttle

import (
	"strconv"
	"testing"
	"time"
)

var epoch = time.Unix(1_700_000_000, 0)

// The first line is written, then one an interval, each saying how many
// went unlogged before it.
func TestLinesAreSpaced(t *testing.T) {
	var l Lines
	for _, tc := range []struct {
		at       time.Duration // since epoch
		ok       bool
		unlogged int
	}{
		{0, true, 0},
		{time.Second, false, 0},
		{9 * time.Second, false, 0},
		{10 * time.Second, true, 2},
		{11 * time.Second, false, 0},
		{time.Minute, true, 1},
		{2 * time.Minute, true, 0},
	} {
		unlogged, ok := l.Allow(epoch.Add(tc.at), 10*time.Second)
		if ok != tc.ok || unlogged != tc.unlogged {
			t.Fatalf("at %v: Allow = %d, %v; want %d, %v", tc.at, unlogged, ok, tc.unlogged, tc.ok)
		}
	}
}

// A key is warned about once a minute, whatever other keys do.
func TestKeysAreWarnedAboutOnceAMinute(t *testing.T) {
	var k Keys
	for _, tc := range []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"a", 0, true},
		{"a", time.Second, false},
		{"b", time.Second, true},
		{"a", 59 * time.Second, false},
		{"a", time.Minute, true},
		{"b", time.Minute, false},
		{"b", time.Minute + time.Second, true},
	} {
		if got := k.Due(tc.key, epoch.Add(tc.at)); got != tc.want {
			t.Fatalf("%s at %v: Due = %v, want %v", tc.key, tc.at, got, tc.want)
		}
	}
}

// Past MaxKeys keys, those warned about more than a minute ago are
// forgotten; when none was, every key is.
func TestKeysAreBounded(t *testing.T) {
	var k Keys
	for i := range MaxKeys {
		k.Due("old:"+strconv.Itoa(i), epoch)
	}
	k.Due("new:0", epoch.Add(KeyEvery)) // the old ones are a minute old: forgotten
	if len(k.last) != 1 {
		t.Fatalf("%d keys held after the old ones aged, want 1", len(k.last))
	}
	for i := 1; len(k.last) < MaxKeys; i++ {
		k.Due("new:"+strconv.Itoa(i), epoch.Add(KeyEvery))
	}
	if !k.Due("newer", epoch.Add(KeyEvery+time.Second)) || len(k.last) != 1 {
		t.Fatalf("%d keys held after %d recent ones, want 1: all were forgotten", len(k.last), MaxKeys)
	}
	if k.Due("new:0", epoch.Add(KeyEvery+2*time.Second)) != true {
		t.Fatal("a forgotten key was not warned about again")
	}
}
