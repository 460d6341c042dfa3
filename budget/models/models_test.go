package models_test

import (
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/budget/models"
)

// TestResolve: the table's family for a model it knows, the stated one
// for a model it does not, and an error that says what to write for
// everything else; never a guess.
func TestResolve(t *testing.T) {
	for _, c := range []struct {
		model  string
		stated models.Family
		want   models.Family
		err    string
	}{
		{"gpt-4o", "", models.Chat, ""},
		{"GPT-4.1-mini", "", models.Chat, ""},
		{"o3-mini", "", models.Reasoning, ""},
		{"gpt-5-chat", "", models.Chat, ""},
		{"gpt-5", "", models.Reasoning, ""},
		{"my-finetune", models.Reasoning, models.Reasoning, ""},
		{"my-finetune", "", "", "set family: chat"},
		{"gpt-4o", models.Reasoning, "", "leave family out"},
		{"gpt-4o", "vision", "", "not a model family"},
		{"o1-mini", "", "", "deploy o3-mini or o4-mini"},
	} {
		info, err := models.Resolve(c.model, c.stated)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Resolve(%q, %q) = %v, want an error saying %q", c.model, c.stated, err, c.err)
		case c.err == "" && (err != nil || info.Family != c.want):
			t.Errorf("Resolve(%q, %q) = %+v, %v, want family %s", c.model, c.stated, info, err, c.want)
		}
	}
	if info, _ := models.Resolve("o3", ""); !info.Accepts("high") || info.Accepts("minimal") {
		t.Errorf("o3 takes efforts %q", info.Efforts)
	}
}

// TestDefaultRPM: the request limit that comes with a model's quota, by
// Azure's published units.
func TestDefaultRPM(t *testing.T) {
	for _, c := range []struct {
		model string
		tpm   int64
		want  int64
	}{
		{"gpt-4o", 150_000, 900},
		{"unknown-model", 10_000, 60},
		{"o1", 60_000, 10},
		{"o3", 60_000, 60},
		{"o3-mini", 60_000, 6},
		{"gpt-4o", 1, 1}, // never zero
	} {
		if got := models.DefaultRPM(c.model, c.tpm); got != c.want {
			t.Errorf("DefaultRPM(%q, %d) = %d, want %d", c.model, c.tpm, got, c.want)
		}
	}
}

// TestImageTokens: the published examples of each rule.
func TestImageTokens(t *testing.T) {
	for _, c := range []struct {
		model  string
		w, h   int
		detail string
		want   int64
	}{
		{"gpt-4o", 1024, 1024, "high", 765},
		{"gpt-4o", 1024, 1024, "low", 85},
		{"gpt-4o", 2048, 4096, "high", 1105}, // 768×1536: 2×3 tiles
		{"gpt-4o", 1280, 720, "auto", 1105},  // 1280×720: 3×2 tiles
		{"gpt-4o", 1280, 720, "", 1105},      // no detail is auto
		{"gpt-4o-mini", 1024, 1024, "low", 2833},
		{"gpt-4.1-mini", 4000, 1474, "high", 2489}, // the cap: 1,536 × 1.62
		{"gpt-4.1-mini", 1024, 1024, "low", 1659},  // 32×32 patches × 1.62
		{"gpt-4.1-nano", 320, 320, "high", 246},
		{"o4-mini", 64, 64, "high", 7},
		{"o3", 512, 512, "high", 225},
		{"my-model", 512, 512, "high", 255},
		{"gpt-4o", 0, 100, "high", 0},
	} {
		if got := models.ImageTokens(c.model, c.w, c.h, c.detail); got != c.want {
			t.Errorf("ImageTokens(%s, %d×%d, %q) = %d, want %d", c.model, c.w, c.h, c.detail, got, c.want)
		}
	}
}
