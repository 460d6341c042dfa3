package azuresim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// The simulator and the budget client each keep their own table of Azure's
// quota units; they must agree on every model either of them knows, and on
// the chat models neither lists.
func TestQuotaTablesAgree(t *testing.T) {
	families := slices.Concat(azuresim.QuotaFamilies(), models.QuotaFamilies())
	slices.Sort(families)
	families = slices.Compact(families)
	var names []string
	for _, f := range families {
		names = append(names, f, f+"-2025-04-16", "O"+f[1:])
	}
	names = append(names, "", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-35-turbo", "o", "o2", "o4", "o5-mini")
	for _, m := range names {
		for _, tpm := range []int64{0, 1, 999, 1_000, 5_999, 6_000, 10_000, 60_000, 123_456, 2_000_000} {
			if sim, client := azuresim.DefaultRPM(m, tpm), models.DefaultRPM(m, tpm); sim != client {
				t.Errorf("model %q, %d TPM: the simulator gives %d RPM, the client believes %d", m, tpm, sim, client)
			}
		}
	}
	sim, client := azuresim.QuotaFamilies(), models.QuotaFamilies()
	slices.Sort(sim)
	slices.Sort(client)
	if !slices.Equal(sim, client) {
		t.Errorf("the simulator knows the families %q, the client %q", sim, client)
	}
}

// The client reserves what the simulator charges at admission: each keeps
// its own copy of Azure's character rule.
func TestEstimatesAgree(t *testing.T) {
	for _, msgs := range [][]tokens.Message{
		{{Role: "user", Content: strings.Repeat("x", 28)}},
		{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "click #37"}},
		{{Content: "héllo"}, {Content: ""}, {Content: `{"goal":"find a desk","page":{"url":"/"}}`, Name: "agent"}},
		nil,
	} {
		for _, c := range [][2]int64{{0, 1}, {48, 1}, {4096, 1}, {64, 3}} {
			if sim, client := azuresim.Estimate(msgs, c[0], c[1], 0), llm.Estimate(msgs, c[0], c[1]); sim != client {
				t.Errorf("%d messages, cap %d, n %d: the simulator charges %d, the client reserves %d", len(msgs), c[0], c[1], sim, client)
			}
		}
	}
	if got := llm.Estimate([]tokens.Message{{Role: "user", Content: strings.Repeat("x", 28)}}, 0, 1); got != 8 {
		t.Errorf("a 28-character prompt is estimated at %d tokens; Azure charged 8", got)
	}
}

// The simulator counts an image's tokens by its own copy of the published
// rules, the client by its: they must agree on every model either knows,
// at every size and detail.
func TestImageTablesAgree(t *testing.T) {
	sim, client := azuresim.ImageRulePrefixes(), models.ImageRulePrefixes()
	slices.Sort(sim)
	slices.Sort(client)
	if !slices.Equal(sim, client) {
		t.Errorf("the simulator prices images on the models %q, the client on %q", sim, client)
	}
	names := []string{"", "my-model", "gpt-4", "gpt-35-turbo", "o4", "gpt-5-chat", " GPT-4o "}
	for _, p := range slices.Concat(sim, client) {
		names = append(names, p, p+"-2025-04-14", strings.ToUpper(p))
	}
	sizes := []int{0, 1, 31, 32, 33, 100, 511, 512, 513, 720, 767, 768, 769, 1024, 1080, 1280, 1474, 1920, 2047, 2048, 2049, 4000, 8192}
	for _, m := range names {
		for _, w := range sizes {
			for _, h := range sizes {
				for _, detail := range []string{"", "auto", "low", "high"} {
					if s, c := azuresim.ImageTokens(m, w, h, detail), models.ImageTokens(m, w, h, detail); s != c {
						t.Errorf("model %q, %d×%d at %q: the simulator counts %d tokens, the client %d", m, w, h, detail, s, c)
					}
				}
			}
		}
	}
}
