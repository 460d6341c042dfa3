// Package embedded is the default when there is no config: the Azure
// OpenAI simulator in this process on a loopback port, answering with the
// heuristic stand-in for a model, and the in-memory budget. It needs no
// network and no key, and it is the only package that puts the simulator
// into a binary: an agent that talks to real deployments does not link it.
package embedded

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// Deployment is the one deployment the embedded default serves, named
// for what answers it: reports, results and progress lines show it
// wherever a real run shows its deployment's name.
const Deployment = "stand-in"

// Model says what answers the embedded default's calls, for a result or a
// report to show: a reader of words, not a language model.
const Model = "the embedded stand-in (word matching, not a language model)"

const (
	model        = "gpt-4o-mini"
	modelVersion = "2024-07-18"
	tpm          = 200000
	keyEnv       = "HEADROOM_EMBEDDED_KEY" // read through o.Dispatcher.Getenv, never the environment
)

// key is the simulator's, held as any key is: a secret value no output
// writes, whole or in pieces (redact.Key). So it is random, as a real key
// is, and no output's words are a piece of it.
var key = func() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// Open opens a Caller on the embedded default, answered by the heuristic.
func Open(ctx context.Context, o llm.Options) (*llm.Caller, error) {
	return OpenModel(ctx, heuristic.Model{}, o)
}

// OpenModel is Open with m answering the calls: how a new call type is
// tried offline before a real deployment sees it.
func OpenModel(ctx context.Context, m azuresim.Model, o llm.Options) (*llm.Caller, error) {
	return open(ctx, m, nil, o)
}

// OpenPaced is Open answering at the pace f gives (a base latency and a
// time per generated token): a measurement whose wall time should hold a
// deployed model's, as a bench's does.
func OpenPaced(ctx context.Context, f azuresim.Faults, o llm.Options) (*llm.Caller, error) {
	return open(ctx, heuristic.Model{}, &f, o)
}

func open(ctx context.Context, m azuresim.Model, f *azuresim.Faults, o llm.Options) (*llm.Caller, error) {
	if o.Replay != "" { // answered from the cassette: nothing to start
		return llm.Open(ctx, &config.File{}, o)
	}
	sim, err := azuresim.New(azuresim.Config{Deployments: []azuresim.Deployment{{
		Name: Deployment, Model: model, ModelVersion: modelVersion, TPM: tpm, Reply: "embedded", Faults: f,
	}}}, azuresim.Options{Models: map[string]azuresim.Model{"embedded": m}})
	if err != nil {
		return nil, err
	}
	run, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg := &config.File{Budget: budget.Config{Deployments: []budget.Deployment{{
		Name: Deployment, Endpoint: run.URL, Model: model, ModelVersion: modelVersion,
		TPM: tpm, Auth: budget.Auth{APIKeyEnv: keyEnv},
	}}}}
	o.Dispatcher.Getenv = func(string) string { return key }
	c, err := llm.Open(ctx, cfg, o)
	if err != nil {
		run.Close()
		return nil, err
	}
	c.OnClose(run.Close)
	c.StandIn = Model
	return c, nil
}
