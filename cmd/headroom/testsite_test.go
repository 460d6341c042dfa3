package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTestsiteServesThePages: headroom testsite serves testdata/pages and
// their API over real HTTP, says where, and stops on a signal with 0.
func TestTestsiteServesThePages(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"testsite", "--addr", addr, "--dir", "../../testdata/pages"}, &out, &errb)
	}()
	get := func(path string) (int, string) {
		for i := 0; i < 100; i++ {
			resp, err := http.Get("http://" + addr + path)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, string(b)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("testsite never answered %s", path)
		return 0, ""
	}
	if code, body := get("/shop/index.html"); code != 200 || !strings.Contains(body, "<html") {
		t.Errorf("/shop/index.html: %d %.200s", code, body)
	}
	if code, body := get("/api/search?q=oak"); code != 200 || !strings.Contains(body, "Oak standing desk") {
		t.Errorf("/api/search: %d %.200s", code, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after cancel: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("testsite did not stop")
	}
	for _, want := range []string{"http://" + addr + "/shop/", "/form/", "/feed/", "headroom record http://" + addr + "/shop/ --out shop.har"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("start-up lines lack %q:\n%s", want, errb.String())
		}
	}
}
