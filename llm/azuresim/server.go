package azuresim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds a request body; Azure's own limit is of this order.
const maxBody = 16 << 20

// maxHeader bounds a request's headers: more is answered 431 in Azure's
// JSON shape. The server itself refuses headers past serverMaxHeader
// before any handler runs, and Go's server writes that 431 as plain text
// which the simulator cannot change.
const (
	maxHeader       = 64 << 10
	serverMaxHeader = 1 << 20
)

// Handler serves the resources that have no address of their own: each at
// its path prefix, plus GET /sim/stats.
func (s *Sim) Handler() http.Handler { return s.HandlerFor("") }

// Addrs lists the addresses that resources asked to be served on, apart
// from the main one.
func (s *Sim) Addrs() []string {
	var out []string
	for _, r := range s.resources {
		if r.addr != "" && !slices.Contains(out, r.addr) {
			out = append(out, r.addr)
		}
	}
	return out
}

// HandlerFor serves the resources configured for addr ("" is the main one).
func (s *Sim) HandlerFor(addr string) http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.resources {
		if r.addr != addr {
			continue
		}
		p := r.prefix
		mux.Handle("POST "+p+"/openai/deployments/{deployment}/chat/completions", r.authorized(r.chat))
		mux.Handle("POST "+p+"/openai/v1/chat/completions", r.authorized(r.chat))
		mux.Handle("POST "+p+"/openai/responses", r.authorized(r.responses))
		mux.Handle("POST "+p+"/openai/v1/responses", r.authorized(r.responses))
		mux.HandleFunc("POST "+p+"/sim/deployments/{name}/adjust", r.adjust)
	}
	mux.HandleFunc("GET /sim/stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { notFound(w) })
	return jsonErrors(mux)
}

// jsonErrors answers in Azure's JSON error shape what would otherwise be
// plain text: headers too large, and the errors the mux writes itself
// (a method a route does not take).
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if headerSize(req) > maxHeader {
			headersTooLarge(w)
			return
		}
		h.ServeHTTP(&errorWriter{ResponseWriter: w}, req)
	})
}

// headerSize is about what the request line and headers took on the wire.
func headerSize(req *http.Request) int {
	n := len(req.Method) + len(req.RequestURI) + len(req.Proto) + 4
	for k, vs := range req.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// errorWriter turns an error status written as anything but JSON (as
// http.Error does) into Azure's JSON error for that status.
type errorWriter struct {
	http.ResponseWriter
	replaced bool
}

func (e *errorWriter) WriteHeader(code int) {
	if code >= 400 && !strings.HasPrefix(e.Header().Get("Content-Type"), "application/json") {
		e.replaced = true
		e.Header().Del("X-Content-Type-Options")
		statusError(e.ResponseWriter, code)
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *errorWriter) Write(b []byte) (int, error) {
	if e.replaced {
		return len(b), nil // the plain text the JSON body replaced
	}
	return e.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (e *errorWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// Running is a simulator started by Start: listening, serving, until it
// is closed.
type Running struct {
	// URL is the base URL of the main address, such as http://127.0.0.1:41234.
	URL string
	// Bound lists every address served, the main one first.
	Bound []Bound

	servers []*http.Server
	errc    chan error
}

// Bound is one address a simulator serves on.
type Bound struct {
	// Resource is the address the resources asked for; "" is the main one.
	Resource string
	// Addr is the address bound, host:port.
	Addr string
}

// Start listens on mainAddr ("127.0.0.1:0" picks a free loopback port) and
// on every address a resource asked for, and serves them in the
// background. It returns once every listener is bound, so the URLs can be
// used at once.
func (s *Sim) Start(mainAddr string) (*Running, error) {
	addrs := append([]string{""}, s.Addrs()...)
	r := &Running{errc: make(chan error, len(addrs))}
	lns := make([]net.Listener, 0, len(addrs))
	for _, a := range addrs {
		ln, err := net.Listen("tcp", cmp.Or(a, mainAddr))
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
		r.Bound = append(r.Bound, Bound{Resource: a, Addr: ln.Addr().String()})
		r.servers = append(r.servers, &http.Server{
			Handler:           s.HandlerFor(a),
			ReadHeaderTimeout: s.readTimeout,
			ReadTimeout:       s.readTimeout,
			MaxHeaderBytes:    serverMaxHeader,
		})
	}
	r.URL = "http://" + r.Bound[0].Addr
	for i, srv := range r.servers {
		go func() { r.errc <- srv.Serve(lns[i]) }()
	}
	return r, nil
}

// Close stops serving at once, cutting calls in flight.
func (r *Running) Close() error {
	var err error
	for _, srv := range r.servers {
		err = cmp.Or(err, srv.Close())
	}
	return err
}

// Shutdown stops listening and waits for calls in flight to finish, or
// for ctx to end.
func (r *Running) Shutdown(ctx context.Context) error {
	var err error
	for _, srv := range r.servers {
		err = cmp.Or(err, srv.Shutdown(ctx))
	}
	return err
}

// Serve starts the simulator (see Start), calls ready with each bound
// address, and serves until ctx ends; then it lets calls in flight finish
// for a few seconds.
func (s *Sim) Serve(ctx context.Context, mainAddr string, ready func(resourceAddr, bound string)) error {
	r, err := s.Start(mainAddr)
	if err != nil {
		return err
	}
	if ready != nil {
		for _, b := range r.Bound {
			ready(b.Resource, b.Addr)
		}
	}
	select {
	case <-ctx.Done():
	case err = <-r.errc:
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.Shutdown(shut)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// authorized lets a call through when it carries an accepted key, in the
// api-key header or as a bearer token.
func (r *resource) authorized(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		key := req.Header.Get("api-key")
		if key == "" {
			if v, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
				key = strings.TrimSpace(v)
			}
		}
		if key == "" || (r.sim.keys != nil && !r.sim.keys[key]) {
			unauthorized(w)
			return
		}
		h(w, req)
	})
}

// call is one request on its way through a deployment.
type call struct {
	r          *resource
	d          *deployment
	op         string // Azure's operation name, for 429 messages
	apiVersion string
	ctx        context.Context
}

// route finds the deployment of a call: from the path on the classic
// route, from the body's model on the v1 one. It writes the error itself.
func (r *resource) route(w http.ResponseWriter, req *http.Request, model, op string) (*call, bool) {
	c := &call{r: r, op: op, apiVersion: req.URL.Query().Get("api-version"), ctx: req.Context()}
	name := req.PathValue("deployment")
	v1 := strings.Contains(req.URL.Path, "/openai/v1/")
	switch {
	case v1:
		c.apiVersion, name = "v1", model
		if name == "" {
			badRequest(w, "model", "you must provide a model parameter")
			return nil, false
		}
	case c.apiVersion == "":
		notFound(w)
		return nil, false
	case name == "":
		name = model
	}
	if c.d = r.deployments[name]; c.d == nil {
		deploymentNotFound(w)
		return nil, false
	}
	return c, true
}

// admit waits out the deployment's dispatch delay, injects the configured
// server errors, then charges the call estimated at estimate or writes the
// 429. It reports whether the call may go on.
func (c *call) admit(w http.ResponseWriter, estimate int64) (*ticket, bool) {
	s := c.r.sim
	start := time.Now()
	d := s.dispatchDelay(c.d)
	if d > 0 {
		// The call is on its way to the count: a client that gives up
		// meanwhile is never counted.
		select {
		case <-time.After(d):
		case <-c.ctx.Done():
			return nil, false
		}
	}
	if s.chance(c.d.faults.ErrorRate) {
		s.mu.Lock()
		c.d.stats.ServerErrors++
		s.mu.Unlock()
		c.commonHeaders(w)
		serverError(w)
		return nil, false
	}
	now := time.Now()
	t, refused, st := s.admit(c.d, estimate, now, max(0, now.Sub(start)-d))
	c.commonHeaders(w)
	setRateHeaders(w.Header(), st)
	if refused != nil {
		ms := int64(math.Ceil(float64(refused.wait) / float64(time.Millisecond)))
		secs := max(1, (ms+999)/1000)
		w.Header().Set("retry-after-ms", strconv.FormatInt(ms, 10))
		w.Header().Set("retry-after", strconv.FormatInt(secs, 10))
		tooMany(w, c.op, c.apiVersion, refused.cause, secs)
		return nil, false
	}
	return t, true
}

// finish waits out the simulated generation time, or drops the
// connection, then settles the ticket: the call is complete on the
// simulated service's side either way. It reports whether to answer.
func (c *call) finish(w http.ResponseWriter, req *http.Request, t *ticket, prompt, completion int64) bool {
	s := c.r.sim
	defer s.done(t, prompt, completion)
	if s.chance(c.d.faults.DropRate) {
		s.mu.Lock()
		c.d.stats.Dropped++
		s.mu.Unlock()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		} else {
			panic(http.ErrAbortHandler) // HTTP/2: abort the stream instead
		}
		return false
	}
	if d := s.latency(c.d, completion); d > 0 {
		select {
		case <-time.After(d):
		case <-req.Context().Done():
			return false
		}
	}
	return true
}

func (c *call) commonHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("x-request-id", c.r.sim.newID("req", ""))
	h.Set("apim-request-id", h.Get("x-request-id"))
	if region := c.d.cfg.Region; region != "" {
		h.Set("x-ms-region", region)
	}
}

func setRateHeaders(h http.Header, st state) {
	h.Set("x-ratelimit-limit-tokens", strconv.FormatInt(st.limitTokens, 10))
	h.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(st.remainingTokens, 10))
	h.Set("x-ratelimit-limit-requests", strconv.FormatInt(st.limitRequests, 10))
	h.Set("x-ratelimit-remaining-requests", strconv.FormatInt(st.remainingRequests, 10))
	h.Set("x-ratelimit-reset-tokens", ceilSeconds(st.resetTokens))
	h.Set("x-ratelimit-reset-requests", ceilSeconds(st.resetRequests))
}

func ceilSeconds(d time.Duration) string {
	return strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10)
}

// decode reads a JSON body into v, answering 415 when it is declared as
// something else than JSON (a body with no Content-Type is read as JSON), and 400 the way Azure does when it is not JSON or not the right
// shape. A body that does not arrive within the read timeout is cut off.
func (s *Sim) decode(w http.ResponseWriter, req *http.Request, v any) bool {
	if ct := req.Header.Get("Content-Type"); ct != "" && !isJSON(ct) {
		unsupportedMediaType(w, ct)
		return false
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.readTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeJSON(w, http.StatusRequestEntityTooLarge, azureError{errorBody{
				Code: "invalid_request_error", Type: "invalid_request_error",
				Message: fmt.Sprintf("The request body is larger than the %d bytes allowed.", mb.Limit),
			}})
			return false
		}
		badRequest(w, "", "could not read the request body: %v", err)
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			badRequest(w, te.Field, "Invalid type for '%s': expected %s, but got %s.", te.Field, te.Type, te.Value)
		} else {
			badRequest(w, "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. %v)", err)
		}
		return false
	}
	return true
}

// adjust handles POST {prefix}/sim/deployments/{name}/adjust with a body
// such as {"factor": 0.5, "duration": "30s"} (or "duration_ms": 30000).
func (r *resource) adjust(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Factor     float64 `json:"factor"`
		Duration   string  `json:"duration"`
		DurationMS int64   `json:"duration_ms"`
	}
	if !r.sim.decode(w, req, &body) {
		return
	}
	d := time.Duration(body.DurationMS) * time.Millisecond
	if body.Duration != "" {
		var err error
		if d, err = time.ParseDuration(body.Duration); err != nil {
			badRequest(w, "duration", "duration %q: %v", body.Duration, err)
			return
		}
	}
	name := req.PathValue("name")
	if err := r.sim.Adjust(r.name, name, body.Factor, d); err != nil {
		if errors.Is(err, ErrNoDeployment) {
			deploymentNotFound(w)
			return
		}
		badRequest(w, "factor", "%v", err)
		return
	}
	dep := r.deployments[name]
	writeJSON(w, http.StatusOK, map[string]any{
		"deployment":    name,
		"factor":        body.Factor,
		"until":         time.Now().Add(d).UTC().Format(time.RFC3339Nano),
		"effective_tpm": int64(float64(dep.cfg.TPM) * body.Factor),
	})
}

// newID makes an id of the form prefix_TAG_random (or prefix-random when
// tag is empty).
func (s *Sim) newID(prefix, tag string) string {
	s.mu.Lock()
	a, b := s.rng.Uint64(), s.rng.Uint32()
	s.mu.Unlock()
	if tag == "" {
		return fmt.Sprintf("%s-%016x%08x", prefix, a, b)
	}
	return fmt.Sprintf("%s_%s_%016x%08x", prefix, tag, a, b)
}

// isJSON reports a Content-Type of JSON: application/json or a +json type,
// any parameters (charset) aside.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}
