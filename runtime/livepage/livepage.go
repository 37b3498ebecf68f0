// Package livepage serves a live page of hotkeygen repositories: their
// health, hot keys and traffic, refreshed in place every second, and the
// same data as JSON. It lives apart from runtime so that programs that do
// not serve the page do not link net/http and html/template.
//
//	users := model.MustNewUserRepo(rdb)
//	orders := model.MustNewOrderRepo(rdb)
//	mux.Handle("/debug/hotkeys/", http.StripPrefix("/debug/hotkeys", livepage.Handler(users, orders)))
//
// The library opens no listener: where to mount the handler, and who may
// reach it, is the caller's choice.
package livepage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// Source is what the page shows: every generated repository, and
// runtime.Cache, have these methods. Stats says how the entity is doing
// now; History is its last ten minutes, from which the page takes the
// rates of the last second.
type Source interface {
	Stats() runtime.Stats
	History() []runtime.Sample
}

// Handler returns an http.Handler serving a live page of sources, one
// section per entity in the order given, and the same data as JSON:
//
//	GET /              an HTML page, refreshed in place every second
//	GET /hotkeys.json  a Report
//
// The page loads nothing from elsewhere and links only relatively, so it
// can be mounted under a prefix with http.StripPrefix. Only keys and
// numbers are shown, never values. Handler panics if a source is nil, as
// http.Handle does with a nil handler: that is a bug in the caller.
func Handler(sources ...Source) http.Handler {
	for i, s := range sources {
		if s == nil {
			panic(fmt.Sprintf("livepage: source %d is nil", i))
		}
	}
	return &handler{sources: sources}
}

type handler struct {
	sources []Source
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
	rep := NewReport(time.Now(), h.sources...)
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
