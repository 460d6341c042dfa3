package learn

import (
	"context"
	"os"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/agent/learned"
)

// VariantRun is the runs of one variant: learned on the site as it was,
// run on the changed site (the model from the first changed step), and
// run again from what that healed.
type VariantRun struct {
	Variant string `json:"variant"`
	Learned Run    `json:"learned"`
	Changed Run    `json:"changed"`
	Healed  Run    `json:"healed"`
	// FalseSuccesses counts runs that ended in success with another
	// product in the cart than the task's: a success nobody verified.
	FalseSuccesses int `json:"false_successes"`
}

// MeasureVariants runs the shop's task on each variant, each in a store
// of its own.
func MeasureVariants(ctx context.Context, o Options) ([]VariantRun, error) {
	site := NewSite()
	defer site.Close()
	task, err := agent.ParseTask("add-to-cart.yaml", []byte(site.Task()))
	if err != nil {
		return nil, err
	}
	var out []VariantRun
	for _, v := range Variants {
		vr, err := measureVariant(ctx, site, task, v, o)
		if err != nil {
			return nil, err
		}
		out = append(out, vr)
	}
	return out, nil
}

func measureVariant(ctx context.Context, site *Site, task *agent.Task, v string, o Options) (VariantRun, error) {
	dir, err := os.MkdirTemp("", "headroom-bench-learn-")
	if err != nil {
		return VariantRun{}, err
	}
	defer os.RemoveAll(dir)
	d, err := learned.NewDir(dir)
	if err != nil {
		return VariantRun{}, err
	}
	lib := learned.NewLibrary(d, learned.Options{})
	defer lib.Close()
	vr := VariantRun{Variant: v}
	ps := map[string]string{"product": Products[0]}
	run := func(name string) Run {
		before := len(site.Added())
		r := runOnce(ctx, task, lib, ps, o, name)
		added := site.Added()[before:]
		if r.Status == string(agent.Succeeded) && (len(added) == 0 || added[len(added)-1] != ps["product"]) {
			vr.FalseSuccesses++
		}
		return r
	}
	site.Serve(Same)
	vr.Learned = run("model")
	site.Serve(v)
	vr.Changed = run(v)
	vr.Healed = run(v + ", again")
	site.Serve(Same)
	return vr, ctx.Err()
}
