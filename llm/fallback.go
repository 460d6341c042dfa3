package llm

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// DefaultFallbackShare is the share of calls sent to the fallback pool
// while the primary could serve them: enough that the path is warm and
// watched, never first used in an incident.
const DefaultFallbackShare = 0.01

// Fallback is a pool that serves calls the primary pool cannot serve
// before their deadline: a smaller or different model, degrading before
// dropping. A type's own fallback (calltypes.Type.Fallback) wins over
// Pool.
type Fallback struct {
	Pool string
	// Share is the fraction of calls sent to it anyway; 0 is none.
	Share float64
	// Shapes are the request shapes of the pools, by name: a fallback
	// pool may be another model family.
	Shapes map[string]Shape

	calls atomic.Int64 // for the share: deterministic, every 1/Share-th call
}

// route is where one call goes and how its requests are written.
type route struct {
	pool      string
	shape     Shape
	fallback  bool   // served by the fallback pool
	alternate string // the fallback pool, while on the primary
	altShape  Shape
}

// routeOf places a call of t: on the default pool, or on its fallback
// when the share says so.
func (c *Caller) routeOf(t calltypes.Type) *route {
	rt := &route{pool: budget.DefaultPool, shape: c.Shape}
	fb := c.Fallback.Pool
	if t.Fallback != "" {
		fb = t.Fallback
	}
	if fb == "" || fb == rt.pool {
		return rt
	}
	rt.alternate, rt.altShape = fb, c.Fallback.Shapes[fb]
	if s := c.Fallback.Share; s > 0 {
		n := c.Fallback.calls.Add(1)
		if int64(float64(n)*s) > int64(float64(n-1)*s) {
			rt.fallBack()
		}
	}
	return rt
}

// fallBack moves the call to the fallback pool.
func (rt *route) fallBack() {
	rt.pool, rt.shape, rt.fallback, rt.alternate = rt.alternate, rt.altShape, true, ""
}

// request is the call's request on the pool it is on, with the type's cap
// in the pool's shape; the report says the cap, the pool and the effort.
func (rt *route) request(t calltypes.Type, msgs []tokens.Message, images []calltypes.Image, tier string, rep *Report) *request {
	cap := rt.shape.Cap(t, t.MaxTokens)
	rep.MaxTokens, rep.Fallback, rep.ReasoningEffort = cap, rt.fallback, ""
	if rt.shape.Reasoning() {
		rep.ReasoningEffort = rt.shape.effort(t)
	}
	return newRequest(t, msgs, images, tier, cap, rt.pool, rt.shape)
}

// primaryContext bounds the primary pool's try so that a fallback has
// time left: 60% of what remains of the call's deadline.
func (rt *route) primaryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if rt.alternate == "" || !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, time.Now().Add(time.Until(d)*6/10))
}

// canFallBack reports an error the fallback pool could do better on: the
// primary shed the call, ran out of time for it, or every deployment of
// it was rate-limited or failing. Not a bad request, a bad answer, or
// the caller's own cancellation.
func (rt *route) canFallBack(ctx context.Context, err error) bool {
	if rt.alternate == "" || ctx.Err() != nil {
		return false
	}
	var ce *budget.CallError
	switch {
	case errors.Is(err, budget.ErrShed), errors.Is(err, budget.ErrTooLarge), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &ce):
		return ce.Status == 0 || ce.Status == http.StatusTooManyRequests || ce.Status == http.StatusRequestTimeout || ce.Status >= 500
	}
	return false
}

func (c *Caller) countFallback(typ string, warm bool) {
	c.count(typ, func(s *TypeStats) {
		s.Fallback++
		if warm {
			s.FallbackWarm++
		}
	})
}
