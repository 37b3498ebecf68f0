package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/hotkeygen/hotkeygen/runtime"
	hotkeyotel "github.com/hotkeygen/hotkeygen/runtime/otel"
)

// readDurations instruments the repositories with OpenTelemetry (-otel),
// on an SDK meter provider read in memory, and returns the option, and a
// func that prints hotkey.read.duration as a chart when the demo stops.
func readDurations() (runtime.Option, func(io.Writer) error) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	print := func(out io.Writer) error {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			return err
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "hotkey.read.duration" {
					chart(out, h.DataPoints)
				}
			}
		}
		return mp.Shutdown(context.Background())
	}
	return hotkeyotel.Instrument(hotkeyotel.WithMeterProvider(mp)), print
}

// chart prints each point of hotkey.read.duration (an entity, an outcome,
// a command) as a row of its buckets' shares: where its reads' times fell.
func chart(out io.Writer, points []metricdata.HistogramDataPoint[float64]) {
	name := func(p metricdata.HistogramDataPoint[float64]) string {
		var parts []string
		for _, k := range []string{"hotkey.entity", "hotkey.read.outcome", "db.operation.name"} {
			v, _ := p.Attributes.Value(attribute.Key(k))
			parts = append(parts, v.Emit())
		}
		return strings.Join(parts, " ")
	}
	slices.SortFunc(points, func(a, b metricdata.HistogramDataPoint[float64]) int { return strings.Compare(name(a), name(b)) })
	fmt.Fprintln(out, "\nhotkey.read.duration: the share of each row's reads that took up to each bound (local reads sampled 1 in 256)")
	if len(points) == 0 {
		return
	}
	bounds := points[0].Bounds
	fmt.Fprintf(out, "%-28s %9s", "entity outcome command", "reads")
	for _, b := range bounds[:len(bounds)-1] {
		if b > 0.0025 {
			break
		}
		fmt.Fprintf(out, " %6s", seconds(b))
	}
	fmt.Fprintf(out, " %6s\n", "more")
	for _, p := range points {
		fmt.Fprintf(out, "%-28s %9d", name(p), p.Count)
		var rest uint64
		for i, n := range p.BucketCounts {
			if i < len(bounds) && bounds[i] <= 0.0025 {
				fmt.Fprintf(out, " %6s", bar(n, p.Count))
			} else {
				rest += n
			}
		}
		fmt.Fprintf(out, " %6s\n", bar(rest, p.Count))
	}
}

// seconds prints a bound in the unit that suits it: "250ns", "25µs", "2.5ms".
func seconds(s float64) string {
	switch {
	case s < 1e-6:
		return fmt.Sprintf("%gns", math.Round(s*1e9))
	case s < 1e-3:
		return fmt.Sprintf("%gµs", math.Round(s*1e7)/10)
	}
	return fmt.Sprintf("%gms", math.Round(s*1e4)/10)
}

// bar is a bucket's share of count as a percentage, blank for none.
func bar(n, count uint64) string {
	if n == 0 || count == 0 {
		return "."
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(count))
}
