package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/headroom-agent/headroom/agent"
	_ "github.com/headroom-agent/headroom/agent/learned/learnedredis" // redis:// for --learned
	"github.com/headroom-agent/headroom/budget"
	_ "github.com/headroom-agent/headroom/budget/redisstore" // redis:// in a config
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
)

// openCaller opens the Caller every command that calls a model uses: the
// config file's (the flag's, else $HEADROOM_CONFIG), or the embedded
// default when there is none. It prints the config's warnings; on failure
// it has reported the error and returns the exit code: the budget's (3)
// for a store (Redis) that cannot be reached, 130 when interrupted, and
// otherwise bad usage (2), for the config or a file it or a flag names
// (a cassette that is not there, with or without a config).
func openCaller(ctx context.Context, file string, o llm.Options, stderr io.Writer) (*llm.Caller, int) {
	c, err := loadCaller(ctx, file, o, stderr)
	if err != nil {
		if errors.Is(err, budget.ErrUnavailable) {
			err = fmt.Errorf("the budget store (Redis) the config names cannot be reached: %w", err)
		} else if ctx.Err() == nil {
			err = agent.Usage(err)
		}
		fprintf(stderr, "headroom: %v\n", err)
		return nil, agent.ExitCode(ctx, "", err)
	}
	return c, exitOK
}

func loadCaller(ctx context.Context, file string, o llm.Options, stderr io.Writer) (*llm.Caller, error) {
	f, err := readConfig("", file, stderr)
	if err != nil {
		return nil, err
	}
	if f == nil {
		c, err := embedded.Open(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("the embedded default: %w", err)
		}
		return c, nil
	}
	if f.TypesOnly() {
		// Call types and no deployments: tried on the embedded simulator,
		// with the file's errors at its lines.
		if o.Types == nil {
			o.Types = calltypes.Default()
		}
		if err := f.Apply(o.Types); err != nil {
			return nil, err
		}
		return embedded.Open(ctx, o)
	}
	return llm.Open(ctx, f, o)
}

// readConfig loads the config file the command's flag names, else
// $HEADROOM_CONFIG's (config.Read), and prints its warnings as the
// command's; nil with no error when neither names one.
func readConfig(command, flag string, stderr io.Writer) (*config.File, error) {
	f, _, warnings, err := config.Read(flag)
	if err != nil {
		return nil, err
	}
	name := "headroom"
	if command != "" {
		name += " " + command
	}
	for _, w := range warnings {
		fprintf(stderr, "%s: warning: %s\n", name, w)
	}
	return f, nil
}

// loadConfig loads the config a command that runs tasks reads (the flag's,
// else $HEADROOM_CONFIG), printing its warnings; nil, and ok, when there
// is none: the embedded default. On failure it has said why.
func loadConfig(command, file string, stderr io.Writer) (_ *config.File, ok bool) {
	f, err := readConfig(command, file, stderr)
	if err != nil {
		fprintf(stderr, "headroom %s: %v\n", command, err)
		return nil, false
	}
	return f, true
}

// fleetConfig loads the config a budget command reads (the flag's, else
// $HEADROOM_CONFIG): one with deployments, since the command looks at
// them, and the file's name. It prints the warnings; what fails is a
// usage error.
func fleetConfig(command, flag string, stderr io.Writer) (_ *config.File, name string, _ error) {
	file := config.Path(flag)
	if file == "" {
		return nil, "", agent.Usage(fmt.Errorf("no config: pass --config FILE or set $%s (the fleet's deployments, and the Redis they share)", config.Env))
	}
	f, err := readConfig(command, file, stderr)
	if err != nil {
		return nil, file, agent.Usage(err)
	}
	if f.TypesOnly() {
		return nil, file, agent.Usage(fmt.Errorf("%s has no deployments", file))
	}
	return f, file, nil
}

// storeRouter opens the store a validated config names and a router over
// its deployments, for reading the fleet's dashboard from outside the
// processes that spend it; close closes the store.
func storeRouter(ctx context.Context, cfg *budget.Config) (_ *budget.Router, close func() error, _ error) {
	store, err := budget.OpenStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	router, err := budget.NewRouter(store, cfg, budget.RouterOptions{})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return router, store.Close, nil
}
