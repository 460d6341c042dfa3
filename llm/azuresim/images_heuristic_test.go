package azuresim_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// The heuristic stand-in reads a call's text: a screenshot sent beside it
// changes neither its answer nor the answer's shape.
func TestHeuristicAnswersACallWithAScreenshot(t *testing.T) {
	s, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{
		{Name: "agent", Model: "gpt-4o", TPM: 1_000_000, Reply: "heuristic"},
	}}, azuresim.Options{Models: map[string]azuresim.Model{"heuristic": heuristic.Model{}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	client := openai.NewClient(azure.WithEndpoint(ts.URL, "2024-10-21"), azure.WithAPIKey("k"), azure.WithUnsafeAllowHTTP(), option.WithMaxRetries(0))

	in, err := json.Marshal(calltypes.CheckInput{
		Question: "Does the page show the price?", Goal: "Find the price of the blue widget",
		Page: calltypes.Page{URL: "https://shop.example/widget", Title: "Blue widget", Lines: []calltypes.Line{{Text: "Blue widget. Price: $20."}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var shot bytes.Buffer
	if err := png.Encode(&shot, image.NewGray(image.Rect(0, 0, 1280, 720))); err != nil {
		t.Fatal(err)
	}
	text := calltypes.Message(in)
	format := openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: calltypes.YesNo, Strict: openai.Bool(true), Schema: map[string]any{"type": "object"}},
	}}
	answer := func(user openai.ChatCompletionMessageParamUnion) (string, int64) {
		res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model: "agent", MaxTokens: openai.Int(64), ResponseFormat: format,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Answer with JSON only."), user},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Message.Content, res.Usage.PromptTokens
	}
	plain, plainTokens := answer(openai.UserMessage(text))
	seen, seenTokens := answer(openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart(text),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
			URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(shot.Bytes()), Detail: "low",
		}),
	}))
	var v calltypes.Verdict
	if err := json.Unmarshal([]byte(seen), &v); err != nil || seen != plain {
		t.Errorf("with a screenshot the answer is %s (%v); without, %s", seen, err, plain)
	}
	if seenTokens != plainTokens+azuresim.ImageTokens("gpt-4o", 1280, 720, "low") {
		t.Errorf("prompt tokens %d with the screenshot, %d without", seenTokens, plainTokens)
	}
}
