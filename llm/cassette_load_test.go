package llm

import (
	"strings"
	"testing"
	"time"
)

func TestLoadCassetteBoundsDepth(t *testing.T) {
	start := time.Now()
	_, err := LoadCassette(strings.NewReader(strings.Repeat("[", 100000)+"\n"), "c.jsonl")
	if err == nil || !strings.Contains(err.Error(), "c.jsonl:1: ") || !strings.Contains(err.Error(), "nested") || time.Since(start) > 5*time.Second {
		t.Errorf("100k [: %v", err)
	}
	ok := `{"type":"t","key":"k","request":{},"response":{"a":[1]}}` + "\n"
	if _, err := LoadCassette(strings.NewReader(ok), "c.jsonl"); err != nil {
		t.Errorf("a good line: %v", err)
	}
}

func FuzzLoadCassette(f *testing.F) {
	f.Add([]byte(`{"type":"t","key":"k","request":{},"response":{}}` + "\n"))
	f.Add([]byte(strings.Repeat("[", 1000)))
	f.Add([]byte("\n\n{\"type\":\"t\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := LoadCassette(strings.NewReader(string(data)), "c.jsonl")
		if err != nil && !strings.HasPrefix(err.Error(), "c.jsonl") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
