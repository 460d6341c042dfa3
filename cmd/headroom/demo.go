package main

import (
	"context"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/llm/azuresim"
)

// runDemo starts the embedded simulator on a loopback port and sends it one
// chat completion through the Azure client, printing the answer and the
// rate-limit headers the call came back with.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", "", stderr)
	if code, done := parse(fs, args, stdout); done {
		return code
	}
	sim, err := azuresim.New(azuresim.Config{
		Deployments: []azuresim.Deployment{{Name: "gpt-4o-mini", Model: "gpt-4o-mini", ModelVersion: "2024-07-18", TPM: 60000}},
	}, azuresim.Options{})
	if err != nil {
		fprintf(stderr, "headroom demo: %v\n", err)
		return exitFailed
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		fprintf(stderr, "headroom demo: simulator: %v\n", err)
		return exitFailed
	}
	defer run.Close()
	fprintf(stderr, "headroom demo: simulator on %s\n", run.URL)

	client := openai.NewClient(
		azure.WithEndpoint(run.URL, budget.DefaultAPIVersion),
		azure.WithAPIKey("demo-key"),
		azure.WithUnsafeAllowHTTP(),
		option.WithMaxRetries(0),
	)
	var raw *http.Response
	res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You answer in one short sentence."),
			openai.UserMessage("Which allowance has the most headroom left this minute?"),
		},
		MaxTokens: openai.Int(32),
		N:         openai.Int(1),
	}, option.WithResponseInto(&raw))
	if err != nil {
		fprintf(stderr, "headroom demo: chat completion: %v\n", err)
		return exitFailed
	}
	fprintf(stdout, "answer (%s, finish %s): %s\n", res.Model, res.Choices[0].FinishReason, res.Choices[0].Message.Content)
	fprintf(stdout, "usage: %d prompt + %d completion tokens\n", res.Usage.PromptTokens, res.Usage.CompletionTokens)
	var names []string
	for k := range raw.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit-") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		fprintf(stdout, "%s: %s\n", strings.ToLower(k), raw.Header.Get(k))
	}
	return exitOK
}
