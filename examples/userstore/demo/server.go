package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// pagePath is where the demo mounts the live page, as a service would
// mount it among its own routes.
const pagePath = "/debug/hotkeys/"

// newMux serves the live page of r's repositories at pagePath, with the
// database's load above them, and sends / there.
func newMux(r *repos) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(pagePath, http.StripPrefix(pagePath[:len(pagePath)-1], withDatabase(livepage.Handler(r.sources()...), r)))
	mux.Handle("GET /{$}", http.RedirectHandler(pagePath, http.StatusFound))
	return mux
}

// withDatabase adds a section on r's database to the page that page
// serves at /, after its header: the database's queries in the last
// second against the reads the repositories served, each of which would
// be a query without the cache. It is inside the page's <main
// id="live">, which the page's script fetches again every second.
// hotkeys.json is served as it is.
func withDatabase(page http.Handler, r *repos) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/" {
			page.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		page.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code == http.StatusOK {
			section := fmt.Sprintf(`<section data-part="database"><h2>database <small>%s</small></h2>
<dl class="health">
<div><dt>queries/s</dt><dd class="headline" data-field="db-queries" title="loads and writes the database served in the last second">%d</dd></div>
<div><dt>reads served/s</dt><dd class="headline" data-field="reads-served" title="reads the repositories served in the last second: without the cache, each would be a query">%.0f</dd></div>
</dl></section>`, html.EscapeString(r.dbName), r.queriesPerSec.Load(), r.readsPerSec())
			body = strings.Replace(body, "</header>", "</header>\n"+section, 1)
		}
		maps.Copy(w.Header(), rec.Header())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		io.WriteString(w, body)
	})
}

// serve serves h on ln until ctx ends, then shuts the server down, giving
// requests in flight a few seconds. It returns nil after a clean shutdown.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
