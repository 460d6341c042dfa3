package plan

import (
	"errors"
	"strings"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/config"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// maxConfig bounds the config file read, as package config does.
const maxConfig = 1 << 20

// LoadConfig reads a config file as config.Load does, except that a
// deployment may leave its credential out: a plan is arithmetic on the
// limits and sends nothing, so the file of a fleet being sized, whose
// keys are not chosen yet, is enough. Every other check stands, with the
// file, line and field in its error.
func LoadConfig(path string) (*config.File, []budget.Warning, error) {
	f, ws, err := config.Load(path)
	var ye *yamlconf.Error
	if err == nil || !errors.As(err, &ye) || !strings.HasSuffix(ye.Field, ".auth") {
		return f, ws, err
	}
	data, rerr := yamlconf.ReadFile(path, maxConfig)
	if rerr != nil {
		return nil, nil, rerr
	}
	lenient := new(config.File)
	doc, derr := yamlconf.Decode(path, data, lenient)
	if derr != nil {
		return nil, nil, derr
	}
	for i := range lenient.Budget.Deployments {
		a := &lenient.Budget.Deployments[i].Auth
		if a.APIKeyEnv == "" && !a.Entra {
			a.Entra = true // stands in for the credential; nothing is sent
		}
	}
	ws, err = lenient.Budget.CheckFile(path, doc.Line)
	if err != nil {
		return nil, nil, err
	}
	return lenient, ws, nil
}
