package llm

import (
	"context"
	"fmt"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/headroom-agent/headroom/budget"
)

// minted remembers which Azure resource minted each stored response, so a
// later turn that refers to it goes back there: another resource would
// answer 400 ("created under a different Azure OpenAI resource").
type minted struct {
	mu sync.Mutex
	m  map[string]string // response id -> resource
}

func (m *minted) put(id, resource string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]string{}
	}
	m.m[id] = resource
}

func (m *minted) get(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.m[id]
	return r, ok
}

// Respond sends a Responses API call through the router. A call that
// continues a stored response (PreviousResponseID) is pinned to the
// resource that minted it; one whose resource this dispatcher does not
// know fails at once, rather than bouncing 400s around the pool.
func (d *Dispatcher) Respond(ctx context.Context, c budget.Call, params responses.ResponseNewParams) (*responses.Response, Report, error) {
	if d.router == nil {
		return nil, Report{}, errZeroDispatcher
	}
	if prev := params.PreviousResponseID.Value; params.PreviousResponseID.Valid() && prev != "" {
		res, ok := d.minted.get(prev)
		if !ok {
			return nil, Report{}, fmt.Errorf("%w: previous_response_id %s was not created through this process, so which resource holds it is unknown (send the conversation in full with store=false instead)", budget.ErrPinned, prev)
		}
		c.Resource = res
	}
	var out *responses.Response
	bound := answerBound(params.MaxOutputTokens.Value, 1)
	lease, r, err := d.do(ctx, c, bound, func(ctx context.Context, client *openai.Client, model string, opts ...option.RequestOption) (int64, error) {
		p := params
		p.Model = model
		res, err := client.Responses.New(ctx, p, opts...)
		if err == nil && res == nil {
			err = errNoCompletion
		}
		if err != nil {
			return 0, err
		}
		out = res
		return res.Usage.TotalTokens, nil
	})
	if out != nil {
		r.PromptTokens, r.TokensUsed = out.Usage.InputTokens, out.Usage.TotalTokens
	}
	if err != nil {
		return nil, r, err
	}
	if !params.Store.Valid() || params.Store.Value {
		d.minted.put(out.ID, lease.Deployment.Resource())
	}
	return out, r, nil
}
