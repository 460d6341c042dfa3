package azuresim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// started runs a simulator the way Start does, with its timeouts.
func started(t *testing.T, opts Options) string {
	t.Helper()
	s, err := New(Config{Deployments: []Deployment{{Name: "d", TPM: 1 << 30, RPM: 1 << 30}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.URL
}

// azureJSON checks a body is Azure's error shape and returns its code.
func azureJSON(t *testing.T, resp *http.Response) any {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("status %d with Content-Type %q: %q", resp.StatusCode, ct, raw)
	}
	var b azureError
	if err := json.Unmarshal(raw, &b); err != nil || b.Error.Message == "" {
		t.Fatalf("status %d: not Azure's error shape: %q", resp.StatusCode, raw)
	}
	return b.Error.Code
}

func TestNonJSONContentTypeRefused(t *testing.T) {
	url := started(t, Options{})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "text/json"} {
		req, _ := http.NewRequest(http.MethodPost, chatURL(url, "d"), strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
		req.Header.Set("api-key", "k")
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("%s: status %d, want 415", ct, resp.StatusCode)
		}
		if code := azureJSON(t, resp); code != "UnsupportedMediaType" {
			t.Errorf("%s: code %v", ct, code)
		}
	}
	r := post(t, chatURL(url, "d"), chatBody("x", 5), "api-key", "k", "Content-Type", "application/json; charset=utf-8")
	if r.status != 200 {
		t.Errorf("application/json; charset=utf-8: status %d %v", r.status, r.body)
	}
}

func TestShortBodyCutOff(t *testing.T) {
	url := started(t, Options{ReadTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /openai/deployments/d/chat/completions?api-version=2024-10-21 HTTP/1.1\r\nHost: x\r\napi-key: k\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"messages\":")
	start := time.Now()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, conn) // whatever is answered, then the close
	if took := time.Since(start); err != nil || took > 3*time.Second {
		t.Fatalf("a body shorter than its Content-Length held the connection %s (%v)", took, err)
	}
}

func TestSlowHeadersCutOff(t *testing.T) {
	url := started(t, Options{ReadTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /openai/deployments/d/chat/completions HTTP/1.1\r\nHost: x\r\n")
	start := time.Now()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil || time.Since(start) > 3*time.Second {
		t.Fatalf("headers never finished held the connection %s (%v)", time.Since(start), err)
	}
}

func TestHugeHeaderRefused(t *testing.T) {
	url := started(t, Options{})
	req, _ := http.NewRequest(http.MethodPost, chatURL(url, "d"), strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("api-key", "k")
	req.Header.Set("X-Big", strings.Repeat("a", maxHeader+1))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d, want 431", resp.StatusCode)
	}
	if code := azureJSON(t, resp); code != "RequestHeaderFieldsTooLarge" {
		t.Errorf("code %v", code)
	}

	// Past the server's own limit Go's server answers before any handler,
	// in plain text: all that can be checked is that it is refused.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	go fmt.Fprintf(conn, "POST /openai/deployments/d/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", serverMaxHeader+8192))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "431") {
		t.Errorf("a header past the server's limit: %q %v", line, err)
	}
}

func TestPlainErrorsBecomeJSON(t *testing.T) {
	h := jsonErrors(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if code := azureJSON(t, w.Result()); code != "405" || w.Code != 405 {
		t.Errorf("status %d code %v", w.Code, code)
	}
}
