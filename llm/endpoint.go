package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/budget"
)

// An Azure endpoint is input like any other: whatever it answers, a call
// ends with the API's answer or an error that names the endpoint. These
// rules hold for every way headroom opens one (the dispatcher, the
// probe): a redirect is never followed, since the key would go with it
// to a server the config never named; an answer's body is read no
// further than a bound set from the call's cap; a 2xx answer that is not
// a chat completion is an *EndpointError, never a value; and a call or a
// probe given no deadline gets one, which no endpoint, silent or
// trickling, outlasts.

// EndpointError is an answer from a deployment's endpoint that is not the
// API's: a redirect (refused), a body past the call's bound (read no
// further), or a 2xx answer that is not a chat completion (an empty body,
// a proxy's sign-in page, JSON cut short). It names the deployment and
// its endpoint's host, never the key.
type EndpointError struct {
	Deployment string
	Host       string
	Status     int
	// What says what the endpoint answered, and what to do about it.
	What string
	Err  error
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("llm: deployment %s (%s) answered HTTP %d with %s", e.Deployment, e.Host, e.Status, e.What)
}

func (e *EndpointError) Unwrap() error { return e.Err }

// azureClient is c (a plain client when nil) with every redirect refused:
// a copy, so a client the caller shares keeps its own policy.
func azureClient(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.CheckRedirect = refuseRedirect
	return &out
}

// redirectError is a redirect an Azure client refused. It holds where the
// redirect pointed, host only: a Location may carry credentials in its
// user part or its query.
type redirectError struct {
	status int
	to     string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("a redirect (HTTP %d) to %s, refused", e.status, e.to)
}

func refuseRedirect(req *http.Request, _ []*http.Request) error {
	e := &redirectError{to: req.URL.Host}
	if req.Response != nil {
		e.status = req.Response.StatusCode
	}
	return e
}

// Bounds of an answer's body. A chat completion holds its text once, as
// a JSON string: a token is about 4 bytes of text on average, and the
// longest of o200k's are 128, so 128 bytes a token of the cap, times n,
// is more than any answer a model can give takes. The envelope (ids,
// usage, Azure's content-filter results) is a few KiB; minAnswerBound
// leaves it room many times over, and is the whole bound for an error's
// body. A call with no cap is bounded as one capped at uncappedTokens.
// For a click-pick call (192 tokens) that is 280 KiB, for a type capped
// at 4,096, 768 KiB: a 20 MB answer is refused a few hundred KiB in.
const (
	bytesPerToken  = 128
	minAnswerBound = 256 << 10
	uncappedTokens = 32 << 10
)

// answerBound is the most of an answer's body read for a request capped
// at maxTokens with n choices.
func answerBound(maxTokens, n int64) int64 {
	if maxTokens <= 0 {
		maxTokens = uncappedTokens
	}
	return minAnswerBound + min(maxTokens, 1<<20)*max(1, min(n, 128))*bytesPerToken
}

// answerWatch reads one attempt's answer: its middleware bounds the body
// and notes what came, and check turns what the client said of an
// answer that is not the API's into an *EndpointError. The SDK reads the
// body in the goroutine that sent the request, so no lock is needed.
type answerWatch struct {
	limit       int64
	status      int
	contentType string
	read        int64
	over        bool
}

// middleware wraps the answer's body in the bound. It is a middleware
// rather than a transport: the Azure client sends plain-HTTP loopback
// requests on a transport of its own, past a caller's RoundTripper.
func (w *answerWatch) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil && res.Body != nil {
		w.status, w.contentType = res.StatusCode, res.Header.Get("Content-Type")
		res.Body = &boundedBody{ReadCloser: res.Body, w: w}
	}
	return res, err
}

// boundedBody reads at most w.limit bytes of a body; one more is an
// error, and nothing after it is read.
type boundedBody struct {
	io.ReadCloser
	w *answerWatch
}

func (b *boundedBody) Read(p []byte) (int, error) {
	w := b.w
	if w.over {
		return 0, errTooLarge
	}
	if left := w.limit + 1 - w.read; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.ReadCloser.Read(p)
	w.read += int64(n)
	if w.read > w.limit {
		w.over = true
		return n - int(w.read-w.limit), errTooLarge
	}
	return n, err
}

var errTooLarge = errors.New("the answer is larger than its bound")

// errNoCompletion is an answer that decoded to no chat completion: null,
// or an object without choices.
var errNoCompletion = errors.New("it holds no answer: null, or no choices")

// check is err, what the client said of one attempt on d, as an
// *EndpointError when the endpoint is at fault: it redirected, sent more
// than the bound, or answered 2xx with what is not a chat completion.
// An answer the call's deadline cut is one too, wrapping the context's
// error. Any other error is returned as it is.
func (w *answerWatch) check(ctx context.Context, d *budget.Deployment, raw *http.Response, err error) error {
	if err == nil {
		return nil
	}
	e := &EndpointError{Deployment: d.Name, Host: endpointHost(d), Status: w.status, Err: err}
	if raw != nil {
		e.Status = raw.StatusCode
	}
	var re *redirectError
	switch {
	case errors.As(err, &re):
		// The client's error quotes the Location whole: only the host
		// is kept.
		e.Err = re
		e.What = fmt.Sprintf("a redirect to %s, which is never followed (the key would go with it): set the deployment's endpoint to the address that serves it", re.to)
	case w.over:
		e.Err = errTooLarge
		e.What = fmt.Sprintf("more than %s, more than an answer to this call can hold: it was read no further", kib(w.limit))
	case e.Status < 200 || e.Status > 299:
		return err
	case ctx.Err() != nil:
		// The answer began and was not over when the call's time was:
		// the error still says which (errors.Is a context's error).
		e.What = fmt.Sprintf("%d bytes of an answer by the call's deadline, and no more", w.read)
		if errors.Is(ctx.Err(), context.Canceled) {
			e.What = fmt.Sprintf("%d bytes of an answer before the call was stopped", w.read)
		}
	case w.read == 0:
		e.What = "an empty body, not a chat completion" + notAzure
	case !jsonType(w.contentType):
		e.What = fmt.Sprintf("%d bytes of %s, not a chat completion", w.read, cmp.Or(w.contentType, "no content type")) + notAzure
	default:
		e.What = fmt.Sprintf("%d bytes of %s, not a chat completion (%v)", w.read, w.contentType, err) + notAzure
	}
	return e
}

// notAzure is what to do when something other than Azure OpenAI answers
// for an endpoint.
const notAzure = ": something other than Azure OpenAI answers there (a proxy's sign-in page?): check the endpoint, and any proxy on the way (HTTPS_PROXY)"

func jsonType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return strings.Contains(mt, "application/json") || strings.HasSuffix(mt, "+json")
}

func endpointHost(d *budget.Deployment) string {
	if u, err := url.Parse(d.Resource()); err == nil && u.Host != "" {
		return u.Host
	}
	return "its endpoint"
}

func kib(n int64) string { return fmt.Sprintf("%d KiB", n>>10) }
