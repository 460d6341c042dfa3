// Package config reads headroom's one config file. Each part of the file
// belongs to the package that uses it: the deployments, the store and how
// carefully they are spent to budget.Config; call-type overrides to
// calltypes. This package holds the file as a whole, so a part can grow
// (agent settings, say) without the others knowing of it.
//
//	redis: redis://127.0.0.1:6379/1   # budget (a database of its own)
//	deployments: [...]                # budget
//	calltypes:                        # calltypes overrides, by type name
//	  yes-no: {max_tokens: 48}
package config

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// File is the config file, decoded and checked.
type File struct {
	// Budget is the file's top level but for the sections below.
	Budget budget.Config `yaml:",inline"`
	// CallTypes overrides registered types by name; Apply applies them.
	CallTypes map[string]calltypes.Override `yaml:"calltypes"`
	// Redact names more headers, parameters and body fields whose values
	// are secret, beside the built-in list (internal/redact); Apply adds
	// them for the whole process.
	Redact []string `yaml:"redact"`
	// ReasoningTokens changes the room given to reasoning on a reasoning
	// model at each effort (minimal, low, medium, high), for the types
	// that set no reasoning_tokens of their own (llm.ReasoningAllowance).
	ReasoningTokens map[string]int64 `yaml:"reasoning_tokens"`
	// Fallback is the pool that serves calls the default pool cannot in
	// time, and the share of calls it serves anyway (default 1%), so the
	// path is always in use. A type's own fallback wins over it.
	Fallback *Fallback `yaml:"fallback"`
	// ServiceTiers are the service tiers of each priority class's calls
	// whose type asks for none of its own, such as background: flex.
	ServiceTiers map[calltypes.Priority]string `yaml:"service_tiers"`
	// Learned is where learned runs live (agent.OpenLearned): off (the
	// default), memory, dir:PATH, redis (the budget's Redis) or a
	// redis:// URL of its own. run's --learned wins over it.
	Learned string `yaml:"learned"`

	name string
	doc  *yamlconf.Doc
}

// maxFile bounds what Load reads: a config is a few kilobytes.
const maxFile = 1 << 20

// Env names the environment variable that gives the config file's path
// when no flag does.
const Env = "HEADROOM_CONFIG"

// Path is the config file a command reads: the one its flag names, else
// $HEADROOM_CONFIG's; "" when neither names one.
func Path(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(Env)
}

// Read loads the config file Path(flag) names: file is that path, and f
// nil with no error when there is none.
func Read(flag string) (f *File, file string, warnings []budget.Warning, err error) {
	if file = Path(flag); file == "" {
		return nil, "", nil, nil
	}
	f, warnings, err = Load(file)
	return f, file, warnings, err
}

// Load reads and checks a config file. Every error is file:line: field:
// what is wrong; warnings read the same way.
func Load(path string) (*File, []budget.Warning, error) {
	data, err := yamlconf.ReadFile(path, maxFile)
	if err != nil {
		return nil, nil, err
	}
	return Parse(path, data)
}

// Parse decodes and checks a config held in memory; name is for messages.
func Parse(name string, data []byte) (*File, []budget.Warning, error) {
	f := &File{name: name}
	doc, err := yamlconf.Decode(name, data, f)
	if err != nil {
		return nil, nil, err
	}
	f.doc = doc
	for i, n := range f.Redact {
		if redact.Normalize(n) == "" {
			return nil, nil, doc.Errorf(fmt.Sprintf("redact[%d]", i), "%q is not a name: give a header, parameter or field name such as x-tenant-key", n)
		}
	}
	for e, n := range f.ReasoningTokens {
		if !calltypes.IsEffort(e) {
			return nil, nil, doc.Errorf("reasoning_tokens", "%q is not a reasoning effort: use minimal, low, medium or high", e)
		}
		if n <= 0 {
			return nil, nil, doc.Errorf("reasoning_tokens."+e, "%d: the room for reasoning must be above zero", n)
		}
	}
	for class, tier := range f.ServiceTiers {
		if class != calltypes.Interactive && class != calltypes.Background {
			return nil, nil, doc.Errorf("service_tiers", "%q is not a priority class: use interactive or background", class)
		}
		if !calltypes.IsTier(tier) {
			return nil, nil, doc.Errorf("service_tiers."+string(class), "%q is not a service tier: use flex or priority", tier)
		}
	}
	if err := f.checkLearned(); err != nil {
		return nil, nil, err
	}
	if f.TypesOnly() {
		return f, nil, nil
	}
	ws, err := f.Budget.CheckFile(name, doc.Line)
	if err != nil {
		return nil, nil, err
	}
	if err := f.checkFallbacks(); err != nil {
		return nil, nil, err
	}
	return f, ws, nil
}

// checkLearned refuses a learned store the agent cannot open by its form.
func (f *File) checkLearned() error {
	s := f.Learned
	switch {
	case s == "", s == "off", s == "memory", s == "redis":
	case strings.HasPrefix(s, "dir:") && len(s) > len("dir:"):
	case strings.HasPrefix(s, "redis://"), strings.HasPrefix(s, "rediss://"):
	default:
		return f.doc.Errorf("learned", "%q: want off, memory, dir:PATH, redis (the budget's Redis) or redis://HOST:PORT", redact.Text(s))
	}
	return nil
}

// Fallback is a config's fallback pool.
type Fallback struct {
	Pool string `yaml:"pool"`
	// Share is the fraction of calls sent to the pool while the default
	// pool could serve them; nil is 0.01, 0 none.
	Share *float64 `yaml:"share"`
}

// DefaultShare is Fallback.Share when it is not set.
const DefaultShare = 0.01

// ShareOrDefault is the share the fallback pool gets.
func (fb *Fallback) ShareOrDefault() float64 {
	if fb == nil || fb.Pool == "" {
		return 0
	}
	if fb.Share == nil {
		return DefaultShare
	}
	return *fb.Share
}

// checkFallbacks says whether every fallback names a pool of the file
// other than the default one (pools are checked to be one model each).
func (f *File) checkFallbacks() error {
	pools := f.Budget.Pools()
	check := func(field, pool string) error {
		if pool == budget.DefaultPool {
			return f.doc.Errorf(field, "the fallback is the default pool itself: name another pool, whose deployments say pool: NAME")
		}
		if _, ok := pools[pool]; !ok {
			names := make([]string, 0, len(pools))
			for n := range pools {
				names = append(names, n)
			}
			slices.Sort(names)
			return f.doc.Errorf(field, "no pool %q: the pools are %v (a deployment joins one with pool: NAME)", pool, names)
		}
		return nil
	}
	if fb := f.Fallback; fb != nil {
		if fb.Pool == "" {
			return f.doc.Errorf("fallback.pool", "a fallback names its pool")
		}
		if err := check("fallback.pool", fb.Pool); err != nil {
			return err
		}
		if s := fb.Share; s != nil && (!(*s >= 0) || *s > 1) {
			return f.doc.Errorf("fallback.share", "%v is not a share: write a fraction from 0 to 1, such as 0.01", *s)
		}
	}
	for name, o := range f.CallTypes {
		if o.Fallback != "" {
			if err := check("calltypes."+name+".fallback", o.Fallback); err != nil {
				return err
			}
		}
	}
	return nil
}

// TypesOnly reports a file that declares no deployments and nothing else
// of a budget: call types (and redact names) to try on the embedded
// simulator before any deployment sees them.
func (f *File) TypesOnly() bool {
	b := f.Budget
	return len(b.Deployments) == 0 && b.Redis == "" && b.RedisEnv == "" && b.Margin == 0 && b.Refund == "" && b.Window == 0 &&
		b.InteractiveFloor == nil && b.AffinityThreshold == nil && len(f.CallTypes) > 0
}

// Apply adds the file's redact names to the process's list of secret
// names, and applies its call types to types, in name order: an entry
// for a registered type changes it (Override); an entry with a system
// prompt and a schema under a new name defines one (Define). An unknown
// type, a bad cap or a bad schema is an error at the entry's line.
func (f *File) Apply(types *calltypes.Registry) error {
	if f == nil {
		return nil
	}
	redact.Extend(f.Redact...)
	names := make([]string, 0, len(f.CallTypes))
	for n := range f.CallTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		o := f.CallTypes[n]
		apply := types.Override
		if _, known := types.Lookup(n); !known && o.Defines() {
			apply = types.Define
		}
		if err := apply(n, o); err != nil {
			field := "calltypes." + n
			if f.doc != nil {
				return f.doc.Errorf(field, "%v", err)
			}
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	return nil
}

// Name is the file's name as given to Load or Parse.
func (f *File) Name() string { return f.name }
