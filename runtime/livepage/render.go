package livepage

import (
	_ "embed"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
)

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"count":    formatCount,
	"total":    func(n uint64) string { return formatCount(float64(n)) },
	"rate":     formatRate,
	"percent":  formatPercent,
	"share":    formatShare,
	"bytes":    formatBytes,
	"duration": formatSeconds,
	"clock":    func(t *time.Time) string { return t.Format("15:04:05") },
	"since":    func(now time.Time, t *time.Time) string { return formatSeconds(now.Sub(*t).Seconds()) },
	"chart":    newChart,
}).Parse(pageHTML))

func formatPercent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// formatShare writes a share that may be undefined as a dash: 0.0% would
// say that memory served none of some reads, where there was nothing to
// serve from it.
func formatShare(f *float64) string {
	if f == nil {
		return "\u2014"
	}
	return formatPercent(*f)
}

// formatRate writes a rate of events that may be rare, such as errors:
// below 10 a second with a decimal, and never a rounded 0 for a rate that
// is not 0.
func formatRate(n float64) string {
	switch {
	case n == 0 || n >= 10:
		return formatCount(n)
	case n < 0.1:
		return "<0.1"
	default:
		return strconv.FormatFloat(n, 'f', 1, 64)
	}
}

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
