package browser

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// fence is the proxy a launched browser sends all of its traffic through
// when a run is confined, loopback included. The Fetch domain only sees
// the tab it is enabled on; popups, new tabs, workers, prefetches,
// prerenders and sockets reach the network beside it. Through the fence
// they cannot: it forwards what the allowlist admits and refuses the rest
// with a 403, whichever target asked.
//
// It is a plain forward proxy (CONNECT tunnels for https and wss,
// absolute-form requests for http) written here rather than taken from a
// proxy library: what it must do is refuse by host, and the rest is
// net/http's.
type fence struct {
	allow   allowlist
	ln      net.Listener
	srv     *http.Server
	proxy   *httputil.ReverseProxy
	refused func(method, url string)
	// answer, when set, may answer a request itself (a replay, from its
	// archive) before the allowlist is asked; it reports whether it did.
	answer func(w http.ResponseWriter, r *http.Request) bool

	mu    sync.Mutex
	conns map[net.Conn]struct{} // hijacked tunnels, closed with the fence
}

// startFence listens on a loopback port. refused, when set, is called for
// each request it turns away.
func startFence(allow allowlist, refused func(method, url string)) (*fence, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fence{allow: allow, ln: ln, refused: refused, conns: map[net.Conn]struct{}{}}
	tr := &http.Transport{
		Proxy:                 nil, // the fence dials the allowed host itself
		DialContext:           dialHost,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 2 * time.Minute,
		DisableCompression:    true, // pass bodies through as the server sent them
	}
	f.proxy = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: tr,
		ErrorLog:  nil,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// Said in a header too: the tab's page is this answer, and a
			// navigation that ends on it did not reach its site.
			w.Header().Set(fenceUnreachable, oneLine(err.Error()))
			http.Error(w, "headroom fence: "+err.Error(), http.StatusBadGateway)
		},
	}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 30 * time.Second, ErrorLog: nil}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// dialHost dials addr for the fence. A name under localhost is this
// machine's, as RFC 6761 has it and as Chrome itself resolves it without
// asking the system: the fence, dialling for Chrome, does the same, so a
// site served as shop.localhost works through the fence as without it.
func dialHost(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return d.DialContext(ctx, network, addr)
}

// fenceUnreachable is the header of the fence's answer for a host that
// did not answer it: the network error, as a browser would have met it.
const fenceUnreachable = "X-Headroom-Unreachable"

// oneLine keeps a header value on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// addr is the proxy's address for Chrome's --proxy-server.
func (f *fence) addr() string { return "http://" + f.ln.Addr().String() }

func (f *fence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		f.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "headroom fence: a proxy request names its URL in full", http.StatusBadRequest)
		return
	}
	if f.answer != nil && f.answer(w, r) {
		return
	}
	if !f.allow.host(r.URL.Hostname()) {
		f.refuse(w, r.Method, r.URL.String())
		return
	}
	r.Header.Del("Proxy-Connection")
	r.Header.Del("Proxy-Authorization")
	f.proxy.ServeHTTP(w, r)
}

func (f *fence) refuse(w http.ResponseWriter, method, u string) {
	if f.refused != nil {
		f.refused(method, u)
	}
	http.Error(w, "headroom: "+ErrBlocked.Error(), http.StatusForbidden)
}

// tunnel joins the browser to an allowed host:port for TLS or a socket.
func (f *fence) tunnel(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "headroom fence: CONNECT wants host:port", http.StatusBadRequest)
		return
	}
	if !f.allow.host(host) {
		scheme := "https://"
		if strings.HasSuffix(r.Host, ":80") {
			scheme = "http://"
		}
		f.refuse(w, r.Method, scheme+r.Host+"/")
		return
	}
	up, err := dialHost(r.Context(), "tcp", r.Host)
	if err != nil {
		http.Error(w, "headroom fence: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "headroom fence: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !f.track(down, up) {
		return
	}
	_, _ = down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		// What the browser sent after its CONNECT and before the reply
		// waits in buf.
		_, _ = io.Copy(up, buf.Reader)
		closeWrite(up)
	}()
	go func() {
		_, _ = io.Copy(down, up)
		closeWrite(down)
		f.untrack(down, up)
	}()
}

func closeWrite(c net.Conn) {
	if t, ok := c.(*net.TCPConn); ok {
		_ = t.CloseWrite()
		return
	}
	_ = c.Close()
}

// track remembers a tunnel's two ends so close can end them; false when
// the fence is already closed.
func (f *fence) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *fence) untrack(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(f.conns, c)
	}
}

// close stops the proxy and every tunnel through it.
func (f *fence) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = f.srv.Shutdown(ctx)
	_ = f.srv.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
}
