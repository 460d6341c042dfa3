package azuresim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// serve starts a simulator for cfg on a real loopback listener.
func serve(t *testing.T, cfg Config, opts Options) (*Sim, string) {
	t.Helper()
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// reply is one HTTP exchange, decoded.
type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func (r reply) int(h string) int64 {
	v, err := strconv.ParseInt(r.header.Get(h), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// errorField returns error.<name> of an Azure error body.
func (r reply) errorField(name string) any {
	e, _ := r.body["error"].(map[string]any)
	return e[name]
}

func post(t *testing.T, url string, body any, header ...string) reply {
	t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if len(header) == 0 {
		header = []string{"api-key", "test-key"}
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("POST %s: body is not JSON: %q", url, raw)
		}
	}
	return r
}

func chatURL(base, deployment string) string {
	return base + "/openai/deployments/" + deployment + "/chat/completions?api-version=2024-10-21"
}

func chatBody(content string, maxTokens int) map[string]any {
	b := map[string]any{"messages": []map[string]string{{"role": "user", "content": content}}}
	if maxTokens > 0 {
		b["max_tokens"] = maxTokens
	}
	return b
}

// untilBoundary sleeps until just after the next multiple of d, so a burst
// that follows lands inside one window.
func untilBoundary(d time.Duration) {
	now := time.Now().UnixNano()
	next := (now/int64(d) + 1) * int64(d)
	time.Sleep(time.Duration(next-now) + 2*time.Millisecond)
}

func statsOf(t *testing.T, s *Sim, deployment string) Stats {
	t.Helper()
	for _, st := range s.Stats().Deployments {
		if st.Deployment == deployment {
			return st
		}
	}
	t.Fatalf("no stats for %q", deployment)
	return Stats{}
}

// clearOfBoundary waits out the end of the current window of length d when
// less than a second of it is left, so a few calls that follow share it.
func clearOfBoundary(d time.Duration) {
	now := time.Now().UnixNano()
	if left := time.Duration((now/int64(d)+1)*int64(d) - now); left < time.Second {
		time.Sleep(left + 2*time.Millisecond)
	}
}
