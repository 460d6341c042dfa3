package llm

import (
	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
)

// ApplyOverrides applies the config file's call-type overrides to types;
// an unknown type or a bad cap is an error at its line of the file.
func ApplyOverrides(cfg *budget.Config, types *calltypes.Registry) error {
	return cfg.ApplyCallTypes(func(name string, c budget.CallTypeCaps) error {
		return types.Override(name, calltypes.Override{
			MaxTokens: c.MaxTokens, N: c.N, AllowN: c.AllowN,
			Temperature: c.Temperature, Priority: calltypes.Priority(c.Priority),
		})
	})
}
