package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-agent/headroom/agent"
)

func TestWriteOutputsReplacesOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "result.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := agent.WriteOutputs(dir, &agent.Result{}); err == nil {
		t.Error("result.json, a directory, was written over")
	}
}
