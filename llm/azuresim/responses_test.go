package azuresim

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// Two resources behind path prefixes on one listener, a third on its own.
func threeResources(t *testing.T) (a, b, c string) {
	t.Helper()
	cfg, err := ParseConfig("resources.yaml", []byte(`
resources:
  - name: res-a
    path_prefix: /a
    deployments: [{name: gpt41, model: gpt-4.1, tpm: 100000}]
  - name: res-b
    path_prefix: /b
    deployments: [{name: gpt41, model: gpt-4.1, tpm: 100000}]
  - name: res-c
    addr: elsewhere
    deployments: [{name: gpt41, model: gpt-4.1, tpm: 100000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	main := httptest.NewServer(s.Handler())
	other := httptest.NewServer(s.HandlerFor("elsewhere"))
	t.Cleanup(main.Close)
	t.Cleanup(other.Close)
	return main.URL + "/a", main.URL + "/b", other.URL
}

func newClient(endpoint string) *openai.Client {
	c := openai.NewClient(azure.WithEndpoint(endpoint, "2025-04-01-preview"), azure.WithAPIKey("k"), azure.WithUnsafeAllowHTTP(), option.WithMaxRetries(0))
	return &c
}

func TestResponsesAreScopedToTheResourceThatMintedThem(t *testing.T) {
	a, b, c := threeResources(t)
	ctx := context.Background()
	first, err := newClient(a).Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt41",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("find the search box")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != "completed" || first.OutputText() != "find the search box" {
		t.Fatalf("first turn: %s %q", first.Status, first.OutputText())
	}
	// The same resource continues the conversation, prompt and all.
	next, err := newClient(a).Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt41", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("now click it")},
	})
	if err != nil {
		t.Fatalf("same resource: %v", err)
	}
	if next.Usage.InputTokens <= first.Usage.InputTokens {
		t.Errorf("second turn's input %d tokens should include the first turn's %d", next.Usage.InputTokens, first.Usage.InputTokens)
	}
	// Another resource, behind another prefix or on another address, refuses.
	for _, other := range []string{b, c} {
		_, err := newClient(other).Responses.New(ctx, responses.ResponseNewParams{
			Model: "gpt41", PreviousResponseID: openai.String(first.ID),
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("now click it")},
		})
		var apierr *openai.Error
		if !errors.As(err, &apierr) || apierr.StatusCode != 400 || apierr.Message != differentResource {
			t.Errorf("%s with another resource's id: %v", other, err)
		}
	}
	// Output items are scoped the same way.
	ref := post(t, b+"/openai/responses?api-version=2025-04-01-preview", map[string]any{
		"model": "gpt41",
		"input": []any{map[string]any{"type": "item_reference", "id": first.Output[0].ID}},
	})
	if ref.status != 400 || ref.errorField("message") != differentResource {
		t.Errorf("item_reference to another resource: %d %v", ref.status, ref.body)
	}
	ok := post(t, a+"/openai/v1/responses", map[string]any{
		"model": "gpt41",
		"input": []any{map[string]any{"type": "item_reference", "id": first.Output[0].ID}, map[string]any{"role": "user", "content": "go on"}},
	})
	if ok.status != 200 {
		t.Errorf("item_reference on its own resource: %d %v", ok.status, ok.body)
	}
}

func TestResponsesStoreFalseKeepsNothing(t *testing.T) {
	a, _, _ := threeResources(t)
	ctx := context.Background()
	first, err := newClient(a).Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt41", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := post(t, a+"/openai/responses?api-version=2025-04-01-preview", map[string]any{
		"model": "gpt41", "previous_response_id": first.ID, "input": "again",
	})
	if r.status != 400 || r.errorField("param") != "previous_response_id" {
		t.Errorf("previous_response_id of an unstored response: %d %v", r.status, r.body)
	}
}

func TestResponsesCapAndCharge(t *testing.T) {
	s, url := serve(t, Config{Deployments: []Deployment{{Name: "d", TPM: 100000, Reply: "fixed", OutputTokens: 40}}}, Options{})
	r := post(t, url+"/openai/responses?api-version=2025-04-01-preview", map[string]any{"model": "d", "input": "x", "max_output_tokens": 16})
	if r.status != 200 || r.body["status"] != "incomplete" || r.body["usage"].(map[string]any)["output_tokens"] != 16.0 {
		t.Errorf("cut at 16: %d %v", r.status, r.body)
	}
	if st := statsOf(t, s, "d"); st.TokensCharged != 16+2 {
		t.Errorf("charged %d, want 18", st.TokensCharged)
	}
	if r := post(t, url+"/openai/responses?api-version=2025-04-01-preview", map[string]any{"model": "d"}); r.status != 400 {
		t.Errorf("no input: %d", r.status)
	}
}
