package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

// The chart is well-formed XML with one polyline per system on each
// panel, each through that system's usable points.
func TestChartIsWellFormedWithAPolylinePerSystem(t *testing.T) {
	panels := []Panel{
		{Title: "idle <holding> & more", XLabel: "N", YLabel: "ms/s", Series: []Series{
			{Name: "hotkeygen", X: []float64{1, 8, 256}, Y: []float64{6, 20, 600}},
			{Name: "rueidis", X: []float64{1, 8, 256}, Y: []float64{3, 3, math.NaN()}},
			{Name: "go-redis \"CSC\"", X: []float64{1, 8}, Y: []float64{2, 2}},
		}},
		{Title: "per write", XLabel: "N", YLabel: "µs", Series: []Series{
			{Name: "hotkeygen", X: []float64{8}, Y: []float64{-3}},
			{Name: "rueidis"},
			{Name: "go-redis \"CSC\""},
		}},
	}
	var buf bytes.Buffer
	if err := WriteChart(&buf, "fleet & co", panels); err != nil {
		t.Fatal(err)
	}
	points := map[string][]int{} // series -> points of each of its polylines
	dec := xml.NewDecoder(&buf)
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = el.Name.Local
		}
		if el.Name.Local != "polyline" {
			continue
		}
		var name, pts string
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "data-series":
				name = a.Value
			case "points":
				pts = a.Value
			}
		}
		points[name] = append(points[name], len(strings.Fields(pts)))
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	want := map[string][]int{"hotkeygen": {3, 1}, "rueidis": {2, 0}, "go-redis \"CSC\"": {2, 0}}
	for name, w := range want {
		if got := points[name]; len(got) != len(w) || got[0] != w[0] || got[1] != w[1] {
			t.Errorf("polylines of %s have %v points, want %v", name, got, w)
		}
	}
	if len(points) != len(want) {
		t.Errorf("polylines for %d series, want %d: %v", len(points), len(want), points)
	}
}

// The panels take each system's figures in the order of N, and leave out
// a write scenario's per-write figure that has no baseline.
func TestChartPanelsFromResults(t *testing.T) {
	v := 12.5
	rs := []*Result{
		{System: "hotkeygen", Scenario: "idle-holding", N: 1, CPUMsPerSec: 6},
		{System: "hotkeygen", Scenario: "writes-unheld", N: 1, CPUUsPerWrite: &v},
		{System: "hotkeygen", Scenario: "idle-holding", N: 8, CPUMsPerSec: 9},
		{System: "hotkeygen", Scenario: "writes-unheld", N: 8},
	}
	sel, err := pickSystems("hotkeygen,rueidis")
	if err != nil {
		t.Fatal(err)
	}
	p := chartPanels(rs, sel)
	if len(p) != 2 || len(p[0].Series) != 2 || len(p[1].Series) != 2 {
		t.Fatalf("panels %+v", p)
	}
	if s := p[0].Series[0]; s.Name != "hotkeygen" || len(s.X) != 2 || s.X[1] != 8 || s.Y[1] != 9 {
		t.Errorf("idle-holding series %+v", s)
	}
	if s := p[1].Series[0]; len(s.X) != 1 || s.Y[0] != 12.5 {
		t.Errorf("writes-unheld series %+v", s)
	}
	if s := p[0].Series[1]; s.Name != "rueidis" || len(s.X) != 0 {
		t.Errorf("rueidis series %+v, want empty", s)
	}
}
