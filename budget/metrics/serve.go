package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Start runs e's Run in the background, flushing every interval, and
// returns what stops it: stop writes the last lines and returns Run's
// error. Call stop once.
func (e *EMF) Start(every time.Duration) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, every) }()
	return func() error {
		cancel()
		return <-done
	}
}

// Serve serves src's metrics for Prometheus at /metrics on l, in the
// background; serving that stops on its own is told to failed, if set.
// stop shuts the server down, waiting a second at most for scrapes under
// way, and closes l. Call stop once.
func Serve(l net.Listener, src Source, failed func(error)) (stop func() error) {
	srv := &http.Server{Handler: Handler(NewCollector(src, scrapeTimeout)), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) && failed != nil {
			failed(err)
		}
	}()
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}
}

// scrapeTimeout bounds reading the source for one scrape: a store that
// does not answer leaves the store-read figures out rather than holding
// Prometheus past its own timeout.
const scrapeTimeout = 2 * time.Second
