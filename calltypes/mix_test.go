package calltypes

import "testing"

// The mix names only registered built-ins, each once, and keeps the
// ten-step task's shape.
func TestAgentMix(t *testing.T) {
	m := AgentMix()
	seen := map[string]bool{}
	for _, s := range m {
		if _, ok := Default().Lookup(s.Type); !ok || seen[s.Type] || s.Calls < 1 {
			t.Errorf("share %+v: registered %v, repeated %v", s, ok, seen[s.Type])
		}
		seen[s.Type] = true
		if _, ok := ExampleInput(s.Type); !ok {
			t.Errorf("%s has no example input", s.Type)
		}
	}
	if m.Calls() != 2*AgentSteps+2 {
		t.Errorf("%d calls, want %d", m.Calls(), 2*AgentSteps+2)
	}
	m[0].Calls = 99
	if AgentMix()[0].Calls != 1 {
		t.Error("AgentMix shares its slice")
	}
}
