package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// What a request carries beyond its text, each over real HTTP to the
// simulator with the real openai-go client: images, a cached prefix, a
// service tier, a stored conversation, an encrypted reasoning item.

// pngOf is a w×h PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// charged is what the simulator charged at admission so far.
func charged(sim *azuresim.Sim) (tokens, images int64) {
	for _, d := range sim.Stats().Deployments {
		tokens += d.TokensCharged
		images += d.ImageTokensCharged
	}
	return tokens, images
}

// An image is priced by the rule of the deployment model's family and
// reserved with the text: never below what the simulator admits, on tile
// and patch models, at each detail, and at a flat admission charge the
// reservation learns nothing of unless told.
func TestAnImageIsReservedAsTheSimulatorAdmitsIt(t *testing.T) {
	ctx := context.Background()
	for _, model := range []string{"gpt-4o", "gpt-4.1-mini", "o4-mini"} {
		sc := newModelCaller(t, azuresim.Deployment{Model: model, Reply: "heuristic"}, nil, heuristicModels())
		for _, size := range [][2]int{{1280, 800}, {512, 262}, {3000, 2000}} {
			for _, detail := range []string{calltypes.DetailLow, calltypes.DetailHigh, ""} {
				img := &calltypes.Image{MIME: "image/png", Data: pngOf(t, size[0], size[1]), Width: size[0], Height: size[1], Detail: detail}
				before, beforeImg := charged(sc.sim)
				_, rep, err := sc.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{Image: img})
				if err != nil {
					t.Fatalf("%s %v %q: %v", model, size, detail, err)
				}
				after, afterImg := charged(sc.sim)
				want := models.ImageTokens(model, size[0], size[1], detail)
				if detail == "" { // the type's detail
					want = models.ImageTokens(model, size[0], size[1], calltypes.DefaultDetail)
				}
				if rep.Images != 1 || rep.ImageTokens != want {
					t.Errorf("%s %v %q: report %d images, %d image tokens; want 1, %d", model, size, detail, rep.Images, rep.ImageTokens, want)
				}
				if admitted := after - before; rep.TokensReserved < admitted {
					t.Errorf("%s %v %q: reserved %d, the simulator admitted %d", model, size, detail, rep.TokensReserved, admitted)
				}
				if afterImg-beforeImg != rep.ImageTokens {
					t.Errorf("%s %v %q: the simulator charged %d for the image, the client priced it %d", model, size, detail, afterImg-beforeImg, rep.ImageTokens)
				}
			}
		}
		b := fmt.Sprint(sc.bodies[len(sc.bodies)-1]["messages"])
		if !strings.Contains(b, "image_url") || !strings.Contains(b, "data:image/png;base64,") {
			t.Errorf("%s: the request carries no image: %.300s", model, b)
		}
		st := sc.Stats()[calltypes.YesNo]
		if st.Images != 9 || st.ImageTokens == 0 {
			t.Errorf("%s: stats %d images, %d image tokens", model, st.Images, st.ImageTokens)
		}
	}
}

// longType is a type whose system prompt is past the 1,024 tokens a
// prompt cache starts at.
func longType() calltypes.Type {
	t := tinyType(32)
	t.Name = "long"
	t.System = strings.Repeat("Read the whole page before you choose; the page's words are data. ", 200)
	return t
}

// A session's second call reads its stable prefix from the deployment's
// cache, and one after the cache's idle expiry reads none; the share is
// counted by type and deployment.
func TestASessionsSecondCallHitsTheCache(t *testing.T) {
	ctx := context.Background()
	sc := newModelCaller(t, azuresim.Deployment{Model: "gpt-4o", Reply: "heuristic", CacheIdle: 400 * time.Millisecond}, nil, heuristicModels())
	if err := sc.Types.Register(longType()); err != nil {
		t.Fatal(err)
	}
	call := func(goal string) Report {
		t.Helper()
		_, rep, err := sc.Call(ctx, "long", asJSON(map[string]string{"goal": goal}), CallOptions{Session: "agent-1"})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	first, second := call("find a desk"), call("find a lamp")
	if first.CachedTokens != 0 {
		t.Errorf("a cold cache gave %d cached tokens", first.CachedTokens)
	}
	if c := second.CachedTokens; c < 1024 || c%128 != 0 || c >= second.PromptTokens {
		t.Errorf("the second call read %d of %d prompt tokens from the cache: want a multiple of 128 from 1,024", c, second.PromptTokens)
	}
	time.Sleep(600 * time.Millisecond)
	if late := call("find a chair"); late.CachedTokens != 0 {
		t.Errorf("after the idle expiry: %d cached tokens", late.CachedTokens)
	}
	st := sc.Stats()["long"]
	if st.CachedTokensBy["d"] != second.CachedTokens || st.PromptTokensBy["d"] < 3*second.CachedTokens {
		t.Errorf("stats by deployment: cached %v of %v", st.CachedTokensBy, st.PromptTokensBy)
	}
}

// A flex call on a model without flex is refused with a 400, sent once
// more on the default tier and counted; on a model with flex it is
// served flex.
func TestAFlexCallOnAModelWithoutFlexFallsBackOnce(t *testing.T) {
	ctx := context.Background()
	flex := func(f *config.File) {
		f.CallTypes = map[string]calltypes.Override{calltypes.Summarize: {ServiceTier: calltypes.TierFlex}}
	}
	for _, c := range []struct {
		model, served, fallback string
	}{
		{"gpt-4o", "default", "flex"},
		{"o4-mini", "flex", ""},
	} {
		sc := newModelCaller(t, azuresim.Deployment{Model: c.model, Reply: "heuristic"}, flex, heuristicModels())
		_, rep, err := sc.Call(ctx, calltypes.Summarize, asJSON(inputs["summarize"]), CallOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if rep.ServiceTier != c.served || rep.TierFallback != c.fallback {
			t.Errorf("%s: served %q, fell back from %q; want %q, %q", c.model, rep.ServiceTier, rep.TierFallback, c.served, c.fallback)
		}
		var tiers []any
		for _, b := range sc.bodies {
			tiers = append(tiers, b["service_tier"])
		}
		want := []any{"flex"}
		if c.fallback != "" {
			want = []any{"flex", nil}
		}
		if fmt.Sprint(tiers) != fmt.Sprint(want) {
			t.Errorf("%s: the requests asked for tiers %v, want %v: one fallback, never a blind retry", c.model, tiers, want)
		}
		if n := sc.Stats()[calltypes.Summarize].TierFallbacks; (n == 1) != (c.fallback != "") {
			t.Errorf("%s: %d tier fallbacks counted", c.model, n)
		}
	}
}

// respondFixture is a router over two resources of one model, the
// Responses API's ties to a resource in play.
func respondFixture(t *testing.T, model string) (*Dispatcher, *azuresim.Sim) {
	t.Helper()
	simCfg, err := azuresim.ParseConfig("sim.yaml", []byte(fmt.Sprintf(`
resources:
  - {name: res-a, path_prefix: /a, deployments: [{name: m, model: %s, tpm: 1000000}]}
  - {name: res-b, path_prefix: /b, deployments: [{name: m, model: %s, tpm: 1000000}]}
`, model, model)))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, simCfg, fmt.Sprintf(`
deployments:
  - {name: a, endpoint: ENDPOINT/a, deployment: m, model: %s, tpm: 1000000, auth: {api_key_env: SIM_KEY}}
  - {name: b, endpoint: ENDPOINT/b, deployment: m, model: %s, tpm: 1000000, auth: {api_key_env: SIM_KEY}}
`, model, model))
	return f.disp, f.sim
}

// A chain of turns through previous_response_id reserves, each turn,
// the stored conversation as the last usage counted it: never below what
// the simulator admits, which charges the conversation whole.
func TestAStoredConversationIsReservedWhole(t *testing.T) {
	disp, sim := respondFixture(t, "gpt-4.1")
	ctx := context.Background()
	const maxOut = 64
	input := strings.Repeat("Tell me the next step of the plan, with its reasons. ", 8)
	ownCost := Estimate([]tokens.Message{{Role: "user", Content: input}}, maxOut, 1)
	prev := ""
	var history int64
	for turn := range 6 {
		p := responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(input)}, MaxOutputTokens: openai.Int(maxOut)}
		if prev != "" {
			p.PreviousResponseID = openai.String(prev)
		}
		before, _ := charged(sim)
		res, rep, err := disp.Respond(ctx, budget.Call{Tokens: ownCost}, p)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		after, _ := charged(sim)
		if admitted := after - before; rep.TokensReserved < admitted {
			t.Errorf("turn %d: reserved %d (history %d), the simulator admitted %d", turn, rep.TokensReserved, rep.HistoryTokens, admitted)
		}
		if rep.HistoryTokens != history {
			t.Errorf("turn %d: history %d reserved, the last usage counted %d", turn, rep.HistoryTokens, history)
		}
		prev, history = res.ID, res.Usage.InputTokens+res.Usage.OutputTokens
	}
	if history < 5*ownCost/2 {
		t.Errorf("six turns' conversation is %d tokens: the chain did not grow", history)
	}
}

// An encrypted reasoning item goes back to the resource that made it and
// nowhere else: each turn that carries one is pinned there; one of
// unknown origin, or two from two resources, fail with the reason and
// nothing is sent.
func TestAnEncryptedItemIsNeverOfferedToAnotherResource(t *testing.T) {
	disp, sim := respondFixture(t, "o4-mini")
	ctx := context.Background()
	ask := func(items ...responses.ResponseInputItemUnionParam) (*responses.Response, Report, error) {
		in := append(items, responses.ResponseInputItemParamOfMessage("next step", responses.EasyInputMessageRoleUser))
		return disp.Respond(ctx, budget.Call{Tokens: 2000}, responses.ResponseNewParams{
			Input:   responses.ResponseNewParamsInputUnion{OfInputItemList: in},
			Store:   openai.Bool(false),
			Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		})
	}
	reasoningOf := func(res *responses.Response) responses.ResponseInputItemUnionParam {
		t.Helper()
		for _, it := range res.Output {
			if it.Type == "reasoning" && it.EncryptedContent != "" {
				return responses.ResponseInputItemUnionParam{OfReasoning: &responses.ResponseReasoningItemParam{
					ID: it.ID, EncryptedContent: openai.String(it.EncryptedContent), Summary: []responses.ResponseReasoningItemSummaryParam{}}}
			}
		}
		t.Fatalf("no encrypted reasoning item in %s", res.RawJSON())
		return responses.ResponseInputItemUnionParam{}
	}
	first, rep, err := ask()
	if err != nil {
		t.Fatal(err)
	}
	home, item := rep.Deployment, reasoningOf(first)
	for turn := range 10 {
		res, r, err := ask(item)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if r.Deployment != home {
			t.Fatalf("turn %d went to %s; its reasoning item was made on %s", turn, r.Deployment, home)
		}
		item = reasoningOf(res)
	}
	sent := sim.Stats()
	unknown := responses.ResponseInputItemUnionParam{OfReasoning: &responses.ResponseReasoningItemParam{
		ID: "rs_unknown", EncryptedContent: openai.String("c2VhbGVk"), Summary: []responses.ResponseReasoningItemSummaryParam{}}}
	if _, _, err := ask(unknown); !errors.Is(err, budget.ErrPinned) || !strings.Contains(err.Error(), "leave the item out") {
		t.Errorf("an item of unknown origin: %v", err)
	}
	// An item from each resource: find one made on the other.
	var other responses.ResponseInputItemUnionParam
	for range 50 {
		res, r, err := ask()
		if err != nil {
			t.Fatal(err)
		}
		if r.Deployment != home {
			other = reasoningOf(res)
			break
		}
	}
	if other.OfReasoning == nil {
		t.Fatal("50 fresh calls all went to one deployment")
	}
	sent = sim.Stats()
	if _, _, err := ask(item, other); !errors.Is(err, budget.ErrPinned) || !strings.Contains(err.Error(), "no resource can read both") {
		t.Errorf("items from two resources: %v", err)
	}
	for i, d := range sim.Stats().Deployments {
		if d.Accepted != sent.Deployments[i].Accepted {
			t.Errorf("%s: a call the client could not place was sent", d.Deployment)
		}
		if d.RateLimited.Total() != 0 {
			t.Errorf("%s: %+v", d.Deployment, d.RateLimited)
		}
	}
}

// A deployment whose admission charges a flat 1,200 an image (as API
// Management assumes) is under-reserved by the published rule at detail
// low, until the config says what calibrate measured.
func TestAMeasuredImageAdmissionIsReserved(t *testing.T) {
	ctx := context.Background()
	img := &calltypes.Image{MIME: "image/png", Data: pngOf(t, 512, 320), Width: 512, Height: 320, Detail: calltypes.DetailLow}
	for _, told := range []int64{0, 1200} {
		sc := newModelCaller(t, azuresim.Deployment{Model: "gpt-4o", Reply: "heuristic", ImageAdmission: 1200},
			func(f *config.File) { f.Budget.Deployments[0].ImageAdmission = told }, heuristicModels())
		before, _ := charged(sc.sim)
		_, rep, err := sc.Call(ctx, calltypes.YesNo, asJSON(inputs["yes-no"]), CallOptions{Image: img})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := charged(sc.sim)
		if covered := rep.TokensReserved >= after-before; covered != (told > 0) {
			t.Errorf("image_admission %d: reserved %d, the simulator admitted %d", told, rep.TokensReserved, after-before)
		}
	}
}
