package learned_test

import (
	"testing"

	"github.com/headroom-agent/headroom/agent/learned"
	"github.com/headroom-agent/headroom/agent/learned/learnedtest"
)

func TestMemory(t *testing.T) {
	learnedtest.Run(t, func(t *testing.T) learned.Driver {
		d := learned.NewMemory()
		t.Cleanup(func() { d.Close() })
		return d
	})
}
