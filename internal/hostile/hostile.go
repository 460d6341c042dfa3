// Package hostile serves the pages under testdata/hostile, each of which
// tries to reach a host the run does not allow, and plays that outside
// host on a second loopback address, counting every connection and
// request that reaches it. The fence tests expect the count to stay 0.
package hostile

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// InsideHost and OutsideHost are the two loopback addresses: the run is
// allowed the first.
const (
	InsideHost  = "127.0.0.1"
	OutsideHost = "127.0.0.2"
)

// Dir is testdata/hostile in this module.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "hostile")
}

// Pages lists the corpus's pages, by file name.
func Pages() ([]string, error) {
	m, err := filepath.Glob(filepath.Join(Dir(), "*.html"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(p))
	}
	sort.Strings(out)
	return out, nil
}

// Corpus is the two hosts, serving until Close. The outside host takes
// UDP on its TCP port's number too (WebRTC's STUN, TURN and peer checks).
type Corpus struct {
	Inside  *httptest.Server
	outside *httptest.Server
	udp     net.PacketConn

	mu        sync.Mutex
	conns     int
	hits      []string
	datagrams int
}

// Start serves the corpus on InsideHost and the outside host on
// OutsideHost, each on a free port.
func Start() (*Corpus, error) {
	c := &Corpus{}
	oln, udp, err := listenBoth(OutsideHost)
	if err != nil {
		return nil, fmt.Errorf("the outside host needs %s: %w", OutsideHost, err)
	}
	c.udp = udp
	go c.countDatagrams()
	c.outside = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.hits = append(c.hits, r.Method+" "+r.URL.String())
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>outside</body></html>")
	}))
	c.outside.Listener = &countingListener{Listener: oln, c: c}
	c.outside.Start()

	origin := "http://" + oln.Addr().String()
	iln, err := net.Listen("tcp", InsideHost+":0")
	if err != nil {
		c.outside.Close()
		return nil, err
	}
	c.Inside = httptest.NewUnstartedServer(inside(origin))
	c.Inside.Listener.Close()
	c.Inside.Listener = iln
	c.Inside.Start()
	return c, nil
}

// inside serves the corpus with OUTSIDE and OUTSIDE_HOST filled in, and a
// redirect that takes a request wherever ?to= says.
func inside(origin string) http.Handler {
	host := strings.TrimPrefix(origin, "http://")
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Clean("/" + r.URL.Path)
		if name == "/" {
			name = "/popup.html"
		}
		b, err := safefile.ReadFile(filepath.Join(Dir(), filepath.FromSlash(name)), 1<<20, "a page of the corpus")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		s := strings.ReplaceAll(string(b), "OUTSIDE_HOST", host)
		s = strings.ReplaceAll(s, "OUTSIDE", origin)
		switch filepath.Ext(name) {
		case ".js":
			w.Header().Set("Content-Type", "text/javascript")
		case ".html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		fmt.Fprint(w, s)
	})
	return mux
}

// listenBoth listens on a TCP port of host and on UDP at the same number.
func listenBoth(host string) (net.Listener, net.PacketConn, error) {
	var err error
	for range 20 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", host+":0"); err != nil {
			return nil, nil, err
		}
		var pc net.PacketConn
		if pc, err = net.ListenPacket("udp", ln.Addr().String()); err == nil {
			return ln, pc, nil
		}
		ln.Close()
	}
	return nil, nil, err
}

func (c *Corpus) countDatagrams() {
	buf := make([]byte, 64<<10)
	for {
		if _, _, err := c.udp.ReadFrom(buf); err != nil {
			return
		}
		c.mu.Lock()
		c.datagrams++
		c.mu.Unlock()
	}
}

// URL is a page's address on the inside host.
func (c *Corpus) URL(page string) string { return c.Inside.URL + "/" + page }

// Reached says what reached the outside host: connections accepted, the
// requests made on them, and the UDP datagrams it took.
func (c *Corpus) Reached() (conns int, requests []string, datagrams int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns, append([]string(nil), c.hits...), c.datagrams
}

// Close stops both hosts.
func (c *Corpus) Close() {
	c.Inside.Close()
	c.outside.Close()
	c.udp.Close()
}

type countingListener struct {
	net.Listener
	c *Corpus
}

func (l *countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.c.mu.Lock()
		l.c.conns++
		l.c.mu.Unlock()
	}
	return conn, err
}
