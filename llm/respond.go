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

// minted remembers what only the Azure resource that made it can read:
// each stored response, with the conversation's length as it then stood,
// and each encrypted reasoning item. A later turn that refers to one
// goes back there: another resource answers 400 ("created under a
// different Azure OpenAI resource"), and store=false does not lift the
// tie, since an encrypted item is sealed with its resource's key.
type minted struct {
	mu        sync.Mutex
	responses map[string]storedResponse // by response id
	items     map[string]string         // reasoning item id → resource
	order     []string                  // keys, oldest first, to bound the maps
}

// storedResponse is a stored response's resource and the tokens of the
// conversation it ends (its input and its output, as usage counted
// them): what a turn that continues it is charged as input beside its
// own.
type storedResponse struct {
	resource string
	history  int64
}

// maxMinted bounds what a process remembers: a long-lived one forgets
// its oldest conversations, which then fail with the reason rather than
// bouncing around the pool.
const maxMinted = 1 << 16

func (m *minted) remember(key string, put func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.responses == nil {
		m.responses, m.items = map[string]storedResponse{}, map[string]string{}
	}
	put()
	m.order = append(m.order, key)
	for len(m.order) > maxMinted {
		delete(m.responses, m.order[0])
		delete(m.items, m.order[0])
		m.order = m.order[1:]
	}
}

// keep records what the response out, made on resource, left there: the
// response itself when it was stored, and its encrypted reasoning items.
func (m *minted) keep(out *responses.Response, resource string, stored bool) {
	if stored {
		s := storedResponse{resource: resource, history: out.Usage.InputTokens + out.Usage.OutputTokens}
		m.remember(out.ID, func() { m.responses[out.ID] = s })
	}
	for _, it := range out.Output {
		if it.Type == "reasoning" && it.ID != "" && it.EncryptedContent != "" {
			id := it.ID
			m.remember(id, func() { m.items[id] = resource })
		}
	}
}

// placement is where a Responses call must go, and the stored history
// it is charged for there.
type placement struct {
	resource string // "" for anywhere
	history  int64
}

// place reads a Responses call's ties: the stored response it continues
// and the encrypted reasoning items it carries. Each ties it to the
// resource that made it; ties to two resources, or to a thing this
// process did not see made, cannot be served anywhere and fail with
// the reason.
func (m *minted) place(p responses.ResponseNewParams) (placement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pl placement
	var from string // what tied the call to pl.resource, for an error
	tie := func(resource, what string) error {
		if pl.resource != "" && pl.resource != resource {
			return fmt.Errorf("%w: %s was made by %s and %s by %s: no resource can read both; send the conversation's messages in full, without the reasoning items of either", budget.ErrPinned, from, pl.resource, what, resource)
		}
		pl.resource, from = resource, what
		return nil
	}
	if prev := p.PreviousResponseID.Value; p.PreviousResponseID.Valid() && prev != "" {
		s, ok := m.responses[prev]
		if !ok {
			return pl, fmt.Errorf("%w: previous_response_id %s was not made through this process, so neither the resource that holds it nor the length of its conversation is known: send the conversation's messages in full with store=false, without reasoning items from another resource", budget.ErrPinned, prev)
		}
		if err := tie(s.resource, "previous_response_id "+prev); err != nil {
			return pl, err
		}
		pl.history = s.history
	}
	for i, it := range p.Input.OfInputItemList {
		r := it.OfReasoning
		if r == nil || !r.EncryptedContent.Valid() {
			continue
		}
		what := fmt.Sprintf("input[%d], reasoning item %s,", i, r.ID)
		res, ok := m.items[r.ID]
		if !ok {
			return pl, fmt.Errorf("%w: %s was not made through this process: an encrypted reasoning item is readable only by the resource that made it, which is unknown; leave the item out", budget.ErrPinned, what)
		}
		if err := tie(res, what); err != nil {
			return pl, err
		}
	}
	return pl, nil
}

// Respond sends a Responses API call through the router. A call that
// continues a stored response (PreviousResponseID) or carries encrypted
// reasoning items is pinned to the resource that made them, and waits for
// room there; one whose ties this dispatcher did not see made, or that
// ties it to two resources, fails at once, rather than bouncing 400s
// around the pool. A continued conversation is charged as input whole,
// so its reservation adds the conversation as the last response's usage
// counted it.
func (d *Dispatcher) Respond(ctx context.Context, c budget.Call, params responses.ResponseNewParams) (*responses.Response, Report, error) {
	if d.router == nil {
		return nil, Report{}, errZeroDispatcher
	}
	pl, err := d.minted.place(params)
	if err != nil {
		return nil, Report{}, err
	}
	if pl.resource != "" {
		c.Resource = pl.resource
	}
	c.Tokens += pl.history
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
	r.HistoryTokens = pl.history
	if out != nil {
		r.PromptTokens, r.TokensUsed = out.Usage.InputTokens, out.Usage.TotalTokens
		r.CachedTokens = out.Usage.InputTokensDetails.CachedTokens
	}
	if err != nil {
		return nil, r, err
	}
	d.minted.keep(out, lease.Deployment.Resource(), !params.Store.Valid() || params.Store.Value)
	return out, r, nil
}
