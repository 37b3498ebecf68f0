package livepage

import (
	"strconv"
	"time"
)

// chart is an entity's history laid out for an SVG drawing of viewBox
// 0 0 chartW chartH: up to the last ten minutes, the newest point at the
// right edge, zero at the bottom and Top at the top.
type chart struct {
	Reads, Hits, RedisReads string // polyline points
	Top                     string // the value at the top, formatted
	Span                    int    // minutes from the left edge to the right
	Empty                   bool   // no points yet
}

const (
	chartW, chartH = 600, 120 // the plot; labels sit outside it
	chartPad       = 4        // room above the highest point
)

// chartSpans are the widths the chart may take, in minutes: the narrowest
// that holds the history, so a process that just started shows a chart
// rather than a sliver at the right edge.
var chartSpans = []int{1, 2, 5, 10}

func newChart(hist []PointReport) chart {
	c := chart{Top: "0", Span: chartSpans[0], Empty: len(hist) == 0}
	if c.Empty {
		return c
	}
	end := hist[len(hist)-1].At
	for _, m := range chartSpans {
		c.Span = m
		if end.Sub(hist[0].At) <= time.Duration(m)*time.Minute {
			break
		}
	}
	span := time.Duration(c.Span) * time.Minute
	for len(hist) > 1 && end.Sub(hist[0].At) > span {
		hist = hist[1:] // older than the chart's span
	}
	top := 0.0
	for _, p := range hist {
		top = max(top, p.Reads, p.Hits, p.RedisReads)
	}
	top = niceCeil(top)
	c.Top = formatCount(top)
	line := func(v func(PointReport) float64) string {
		var b []byte
		for i, p := range hist {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendFloat(b, chartW*(1-end.Sub(p.At).Seconds()/span.Seconds()), 'f', 1, 64)
			b = append(b, ',')
			b = strconv.AppendFloat(b, chartH-v(p)/top*(chartH-chartPad), 'f', 1, 64)
		}
		return string(b)
	}
	c.Reads = line(func(p PointReport) float64 { return p.Reads })
	c.Hits = line(func(p PointReport) float64 { return p.Hits })
	c.RedisReads = line(func(p PointReport) float64 { return p.RedisReads })
	return c
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, at least 1, so
// the chart's scale moves in steps instead of with every second.
func niceCeil(v float64) float64 {
	step := 1.0
	for {
		for _, m := range []float64{1, 2, 5} {
			if m*step >= v {
				return m * step
			}
		}
		step *= 10
	}
}
