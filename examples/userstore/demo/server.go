package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime/livepage"
)

// pagePath is where the demo mounts the live page, as a service would
// mount it among its own routes.
const pagePath = "/debug/hotkeys/"

// newMux serves the live page of sources at pagePath and sends / there.
func newMux(sources ...livepage.Source) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(pagePath, http.StripPrefix(pagePath[:len(pagePath)-1], livepage.Handler(sources...)))
	mux.Handle("GET /{$}", http.RedirectHandler(pagePath, http.StatusFound))
	return mux
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
