package livepage

import (
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestChartScale(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0, 1}, {0.5, 1}, {1, 1}, {1.5, 2}, {3, 5}, {7, 10}, {10, 10}, {11, 20}, {4321, 5000}, {50001, 100000},
	} {
		if got := niceCeil(c.in); got != c.want {
			t.Errorf("niceCeil(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	t0 := epoch
	hist := []PointReport{
		{At: t0.Add(-(runtime.HistoryLen + 1) * time.Second), Reads: 9000}, // out of the widest span
		{At: t0.Add(-runtime.HistoryLen * time.Second), Reads: 1000},       // its left edge
		{At: t0.Add(-300 * time.Second), Reads: 400, Hits: 300, RedisReads: 100},
		{At: t0, Reads: 100, Hits: 0, RedisReads: 100},
	}
	ch := newChart(hist)
	if ch.Top != "1,000" || ch.Span != 10 || ch.Empty {
		t.Fatalf("chart %+v, want ten minutes topped at 1,000: the point out of span does not count", ch)
	}
	// y runs down from 120 (zero) to 4 (the top).
	if ch.Reads != "0.0,4.0 300.0,73.6 600.0,108.4" || ch.Hits != "0.0,120.0 300.0,85.2 600.0,120.0" {
		t.Fatalf("reads %q hits %q", ch.Reads, ch.Hits)
	}
	// A young history is drawn over the narrowest span that holds it.
	young := newChart(hist[2:])
	if young.Span != 5 || young.Reads != "0.0,27.2 600.0,96.8" || young.Top != "500" {
		t.Fatalf("five minutes of history: %+v", young)
	}
	if ch := newChart(hist[3:]); ch.Span != 1 || ch.Reads != "600.0,4.0" {
		t.Fatalf("one point: %+v", ch)
	}
	if ch := newChart(nil); !ch.Empty || ch.Reads != "" {
		t.Fatalf("chart of no history: %+v", ch)
	}
}

func TestFormats(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", -4321: "-4,321"} {
		if got := formatCount(in); got != want {
			t.Errorf("formatCount(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0: "0s", 59.9: "59s", 65: "1m05s", 3600 + 7*60 + 3: "1h07m"} {
		if got := formatSeconds(in); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{12: "12 B", 2048: "2.0 KiB", 3 << 20: "3.0 MiB"} {
		if got := formatBytes(in); got != want {
			t.Errorf("formatBytes(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatRateAndShare(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.04: "<0.1", 0.25: "0.2", 3: "3.0", 9.96: "10.0", 10: "10", 1234.5: "1,234"} {
		if got := formatRate(in); got != want {
			t.Errorf("formatRate(%v) = %q, want %q", in, got, want)
		}
	}
	half := 0.5
	for in, want := range map[*float64]string{nil: "\u2014", &half: "50.0%"} {
		if got := formatShare(in); got != want {
			t.Errorf("formatShare(%v) = %q, want %q", in, got, want)
		}
	}
}
