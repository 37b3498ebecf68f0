package runtime

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// Observable is what Handler shows: a *Cache and every generated
// repository satisfy it.
type Observable interface {
	Stats() Stats
	History() []Sample
}

// Handler returns an http.Handler serving a live page of the hot keys of
// repos, and the same data as JSON:
//
//	GET /              an HTML page, refreshed in place every second
//	GET /hotkeys.json  a Report
//
// The page loads nothing from elsewhere and links only relatively, so it
// can be mounted under a prefix with http.StripPrefix. Only keys and
// numbers are shown, never values. The library opens no listener: where to
// mount the handler, and who may reach it, is the caller's choice.
func Handler(repos ...Observable) http.Handler {
	return &handler{repos: repos}
}

type handler struct {
	repos []Observable
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/", "/hotkeys.json":
	case "":
		// Mounted at a prefix and asked for it without its trailing
		// slash: the page's relative links need the slash.
		redirectToDir(w, r)
		return
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	rep := NewReport(time.Now(), h.repos...)
	var b bytes.Buffer
	var err error
	if r.URL.Path == "/hotkeys.json" {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		err = pageTemplate.Execute(&b, rep)
	}
	if err != nil { // a bug: the report is plain data
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.Write(b.Bytes())
}

// redirectToDir sends the client from /prefix to /prefix/, relative to
// the original request, as the prefix itself is not known here.
func redirectToDir(w http.ResponseWriter, r *http.Request) {
	p := r.RequestURI
	if u, err := url.ParseRequestURI(p); err == nil {
		p = u.EscapedPath()
	}
	w.Header().Set("Location", path.Base(p)+"/")
	w.WriteHeader(http.StatusMovedPermanently)
}

// Report is the document GET hotkeys.json serves, and what the page shows.
// Its JSON field names are stable.
type Report struct {
	At       time.Time      `json:"at"`       // when the report was made
	Entities []EntityReport `json:"entities"` // one per repository, in the order given to Handler
}

// EntityReport is one repository's traffic. Totals count since the
// repository was made; rates are per second over its detection window.
type EntityReport struct {
	Entity       string  `json:"entity"`        // the entity's name, e.g. "user"
	ReadsPerSec  float64 `json:"reads_per_sec"` // reads per second
	HitRate      float64 `json:"hit_rate"`      // share of the reads of hot keys served locally, 0 to 1
	TrafficShare float64 `json:"traffic_share"` // share of all reads that were of hot keys, 0 to 1
	Reads        uint64  `json:"reads"`         // reads in total
	HotReads     uint64  `json:"hot_reads"`     // reads of hot keys
	Hits         uint64  `json:"hits"`          // reads served locally
	Misses       uint64  `json:"misses"`        // reads of hot keys that went to Redis
	LocalSize    int     `json:"local_size"`    // values held locally
	LocalBytes   int64   `json:"local_bytes"`   // their encoded size
	Promotions   uint64  `json:"promotions"`    // keys made hot
	Demotions    uint64  `json:"demotions"`     // hot keys that cooled
	RedisErrors  uint64  `json:"redis_errors"`  // Redis commands that failed
	// HotKeys are the keys served locally now, highest rate first; empty,
	// never null, when there are none.
	HotKeys []KeyReport `json:"hot_keys"`
	// History is the traffic of the last ten minutes, one point a second,
	// oldest first; empty, never null, until the second second.
	History []PointReport `json:"history"`
}

// KeyReport is one hot key.
type KeyReport struct {
	Key        string    `json:"key"`         // the Redis key
	QPS        float64   `json:"qps"`         // reads per second on this instance
	ClusterQPS float64   `json:"cluster_qps"` // reads per second summed over every replica; 0 unless aggregate=on
	Since      time.Time `json:"since"`       // when it was promoted
	HotSeconds float64   `json:"hot_seconds"` // seconds since it was promoted
	Hits       uint64    `json:"hits"`        // local hits since it was promoted (sampled, exact in expectation)
}

// PointReport is one second of an entity's traffic.
type PointReport struct {
	At         time.Time `json:"at"`          // end of the second
	Reads      float64   `json:"reads"`       // reads per second
	Hits       float64   `json:"hits"`        // of which served locally
	RedisReads float64   `json:"redis_reads"` // of which read from Redis
}

// NewReport takes a snapshot of repos at now.
func NewReport(now time.Time, repos ...Observable) Report {
	rep := Report{At: now, Entities: make([]EntityReport, 0, len(repos))}
	for _, o := range repos {
		st := o.Stats()
		e := EntityReport{
			Entity:       st.Entity,
			ReadsPerSec:  st.GetQPS,
			HitRate:      st.HitRate,
			TrafficShare: st.TrafficShare,
			Reads:        st.Gets,
			HotReads:     st.HotAccesses,
			Hits:         st.Hits,
			Misses:       st.Misses,
			LocalSize:    st.LocalSize,
			LocalBytes:   st.LocalBytes,
			Promotions:   st.Promotions,
			Demotions:    st.Demotions,
			RedisErrors:  st.RedisErrors,
			HotKeys:      make([]KeyReport, 0, len(st.HotKeys)),
		}
		for _, k := range st.HotKeys {
			e.HotKeys = append(e.HotKeys, KeyReport{
				Key:        k.Key,
				QPS:        k.QPS,
				ClusterQPS: k.ClusterQPS,
				Since:      k.Since,
				HotSeconds: max(0, now.Sub(k.Since).Seconds()),
				Hits:       k.Hits,
			})
		}
		hist := o.History()
		e.History = make([]PointReport, 0, len(hist))
		for _, s := range hist {
			e.History = append(e.History, PointReport(s))
		}
		rep.Entities = append(rep.Entities, e)
	}
	return rep
}

//go:embed handler.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"count":    formatCount,
	"total":    func(n uint64) string { return formatCount(float64(n)) },
	"percent":  func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"bytes":    formatBytes,
	"duration": formatSeconds,
	"chart":    newChart,
}).Parse(pageHTML))

// formatCount writes a rate or a total rounded, with thousands separated.
func formatCount(n float64) string {
	s := strconv.FormatFloat(n, 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func formatBytes(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
}

// formatSeconds writes a duration to the second: 42s, 3m05s, 2h07m.
func formatSeconds(sec float64) string {
	d := time.Duration(sec) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

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
