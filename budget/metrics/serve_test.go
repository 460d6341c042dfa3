package metrics_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/budget/metrics"
)

// lockedBuffer is a bytes.Buffer a background writer and the test can share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Started, an EMF writes in the background; its stop writes the last set
// and reports how the run went.
func TestEMFStartAndStop(t *testing.T) {
	var buf lockedBuffer
	stop := metrics.NewEMF(&buf, source(view())).Start(time.Hour)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 4 {
		t.Errorf("%d lines after a stop, want one set of 4", n)
	}
	e := metrics.NewEMF(refusing{}, source(view()))
	if err := e.Start(time.Hour)(); err == nil || !strings.Contains(err.Error(), errFull.Error()) {
		t.Errorf("stop returned %v, want the writer's error", err)
	}
}

// Served, the metrics are scraped over a real socket until stop, which
// closes it.
func TestServeUntilStopped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	stop := metrics.Serve(l, source(view()), func(err error) { failed <- err })
	url := "http://" + l.Addr().String() + "/metrics"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `headroom_reserved_ratio{deployment="east"} 0.5`) {
		t.Errorf("the scrape has no reserved ratio for east:\n%.400s", body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("still served after stop")
	}
	select {
	case err := <-failed:
		t.Errorf("a stop was told as a failure: %v", err)
	default:
	}
}
