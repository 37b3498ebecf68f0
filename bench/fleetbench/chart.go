package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// The chart is written by hand, as plain SVG, so that the bench needs no
// plotting library and the file reads in any browser or on GitHub.

// Series is one system's line on a panel.
type Series struct {
	Name string
	X, Y []float64 // aligned; a point whose Y is NaN or infinite is left out
}

// Panel is one chart: x is N on a log scale, y is linear.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
}

// Layout of one panel, in SVG user units.
const (
	panelW, panelH = 620.0, 400.0
	plotL, plotR   = 70.0, 450.0 // the plot's left and right edges; the legend is right of it
	plotT, plotB   = 50.0, 330.0
)

// palette gives each series a colour, in order, distinct for
// colour-blind readers (Okabe and Ito).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// WriteChart writes panels side by side as one SVG document.
func WriteChart(w io.Writer, title string, panels []Panel) error {
	var b bytes.Buffer
	width, height := panelW*float64(max(1, len(panels))), panelH+30
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
	for i, p := range panels {
		fmt.Fprintf(&b, `<g transform="translate(%.0f,30)">`+"\n", float64(i)*panelW)
		writePanel(&b, p)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func writePanel(b *bytes.Buffer, p Panel) {
	var xs, ys []float64
	for _, s := range p.Series {
		for i := range min(len(s.X), len(s.Y)) {
			if usable(s.X[i], s.Y[i]) {
				xs, ys = append(xs, s.X[i]), append(ys, s.Y[i])
			}
		}
	}
	fmt.Fprintf(b, `<text x="%.0f" y="20" font-size="13" font-weight="bold">%s</text>`+"\n", plotL, esc(p.Title))
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", plotL, plotT, plotR-plotL, plotB-plotT)

	// x: log10 of N, over the Ns there are; each N gets a tick.
	lo, hi := 1.0, 10.0
	if len(xs) > 0 {
		lo, hi = slices.Min(xs), slices.Max(xs)
	}
	llo, lhi := math.Log10(lo), math.Log10(hi)
	if lhi-llo < 1e-9 {
		llo, lhi = llo-0.5, lhi+0.5
	}
	px := func(x float64) float64 { return plotL + 10 + (plotR-plotL-20)*(math.Log10(x)-llo)/(lhi-llo) }

	// y: linear from 0 (or below, for a negative point) to a round top.
	ymin, ymax := 0.0, 1.0
	if len(ys) > 0 {
		ymin, ymax = min(0, slices.Min(ys)), max(slices.Max(ys), 1e-9)
	}
	step := niceStep((ymax - ymin) / 5)
	ymin, ymax = step*math.Floor(ymin/step), step*math.Ceil(ymax/step)
	if ymax-ymin < step {
		ymax = ymin + step
	}
	py := func(y float64) float64 { return plotB - (plotB-plotT)*(y-ymin)/(ymax-ymin) }

	seen := map[float64]bool{}
	for _, x := range xs {
		if seen[x] {
			continue
		}
		seen[x] = true
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#999"/>`, px(x), plotB, px(x), plotB+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", px(x), plotB+18, strconv.FormatFloat(x, 'g', -1, 64))
	}
	for i := 0; ; i++ {
		y := ymin + float64(i)*step
		if y > ymax+step/2 || i > 50 {
			break
		}
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/>`, plotL, py(y), plotR, py(y))
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", plotL-6, py(y)+4, strconv.FormatFloat(y, 'g', 4, 64))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", (plotL+plotR)/2, plotB+40, esc(p.XLabel))
	fmt.Fprintf(b, `<text transform="translate(18,%.0f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (plotT+plotB)/2, esc(p.YLabel))
	if len(xs) == 0 {
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle" fill="#999">no data: the scenario did not run</text>`+"\n", (plotL+plotR)/2, (plotT+plotB)/2)
	}

	for i, s := range p.Series {
		colour := palette[i%len(palette)]
		var pts bytes.Buffer
		var marks bytes.Buffer
		for j := range min(len(s.X), len(s.Y)) {
			if !usable(s.X[j], s.Y[j]) {
				continue
			}
			if pts.Len() > 0 {
				pts.WriteByte(' ')
			}
			fmt.Fprintf(&pts, "%.1f,%.1f", px(s.X[j]), py(s.Y[j]))
			fmt.Fprintf(&marks, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, px(s.X[j]), py(s.Y[j]), colour)
		}
		fmt.Fprintf(b, `<polyline data-series="%s" points="%s" fill="none" stroke="%s" stroke-width="2"/>%s`+"\n", esc(s.Name), pts.String(), colour, marks.String())
		ly := plotT + 10 + 20*float64(i)
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"/>`, plotR+15, ly, plotR+40, ly, colour)
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", plotR+46, ly+4, esc(s.Name))
	}
}

// usable reports whether a point can be placed: N on a log scale must be
// positive, and neither coordinate may be NaN or infinite.
func usable(x, y float64) bool {
	return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0)
}

// niceStep rounds d up to 1, 2 or 5 times a power of ten.
func niceStep(d float64) float64 {
	if !(d > 0) || math.IsInf(d, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if d <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// chartPanels makes the two panels of results/fleet.svg: what holding
// copies costs an idle node, and what one write of a key nobody holds
// costs it, each against N, one line per system in the order of systems.
func chartPanels(rs []*Result, sys []systemInfo) []Panel {
	pick := func(scenario string, y func(*Result) *float64) []Series {
		var out []Series
		for _, s := range sys {
			se := Series{Name: s.Name}
			for _, r := range rs {
				if r.System != s.Name || r.Scenario != scenario || r.Error != "" {
					continue
				}
				if v := y(r); v != nil {
					se.X, se.Y = append(se.X, float64(r.N)), append(se.Y, *v)
				}
			}
			out = append(out, se)
		}
		return out
	}
	return []Panel{
		{
			Title: "Idle instances holding 10 copies: Redis CPU", XLabel: "instances (N, log scale)", YLabel: "Redis CPU, ms per s",
			Series: pick("idle-holding", func(r *Result) *float64 { return &r.CPUMsPerSec }),
		},
		{
			Title: "Writes of keys no instance holds: Redis CPU per write", XLabel: "instances (N, log scale)", YLabel: "Redis CPU per write, µs (net of idle-holding)",
			Series: pick("writes-unheld", func(r *Result) *float64 { return r.CPUUsPerWrite }),
		},
	}
}
