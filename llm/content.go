package llm

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// content is what a call's requests carry: its messages, the images of
// its user message, and the service tier it asks for.
type content struct {
	msgs   []tokens.Message
	images []calltypes.Image
	tier   string
}

// content is the call's content: the type's messages of in, the
// option's image at the type's detail where it gives none, and the
// type's tier, else its class's.
func (c *Caller) content(t calltypes.Type, in json.RawMessage, o CallOptions) content {
	out := content{msgs: messages(t, in), tier: t.ServiceTier}
	if out.tier == "" {
		out.tier = c.ClassTiers[t.Priority]
	}
	if im := o.Image; im != nil && len(im.Data) > 0 {
		x := *im
		if x.Detail == "" {
			x.Detail = t.Detail
		}
		out.images = []calltypes.Image{x}
	}
	return out
}

// tierRefused reports a 400 for the request's service tier: the model
// behind the deployment does not offer it.
func tierRefused(err error) bool {
	var ce *budget.CallError
	var ae *openai.Error
	return errors.As(err, &ce) && ce.Status == http.StatusBadRequest && errors.As(err, &ae) && ae.Param == "service_tier"
}
