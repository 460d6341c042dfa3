package burst

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBaselines runs A to E against compressed simulators: a 6 s window
// makes 60 RPM admit one request per 100 ms and ten per second.
func TestBaselines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulators for several seconds")
	}
	const n, attempts = 20, 10
	rows := map[string]Row{}
	var mu sync.Mutex
	check := func(t *testing.T, s Strategy, window time.Duration) {
		target, stop, err := Simulated(t.Context(), window)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		r := s.Run(t.Context(), target, n, attempts)
		t.Logf("%s (%s): %+v", s.Name, s.Desc, r)
		mu.Lock()
		rows[s.Name] = r
		mu.Unlock()
		if r.Strategy != s.Name {
			t.Errorf("row names %q", r.Strategy)
		}
		if r.Completed+r.GaveUp != n {
			t.Errorf("completed %d + gave up %d, want %d", r.Completed, r.GaveUp, n)
		}
		if r.Attempts < r.Completed || r.Attempts > n*attempts {
			t.Errorf("%d attempts for %d completed requests (at most %d allowed)", r.Attempts, r.Completed, n*attempts)
		}
		if r.RateLimited > r.Attempts-r.Completed {
			t.Errorf("%d 429s but only %d attempts failed", r.RateLimited, r.Attempts-r.Completed)
		}
		if r.Completed > 0 && !(0 < r.P50S && r.P50S <= r.P99S && r.P99S <= r.WallS) {
			t.Errorf("want 0 < p50 %v ≤ p99 %v ≤ wall %v", r.P50S, r.P99S, r.WallS)
		}
		if want := n / 60.0 * window.Seconds(); r.FloorS != want {
			t.Errorf("floor %v s, want %d requests ÷ 60 RPM × %v = %v s", r.FloorS, n, window, want)
		}
	}
	base := Baselines()
	// E alone first, and less compressed: its sends are timed to slots, and
	// a busy machine's timer delays (100 ms and more on a loaded CI box)
	// or the others' retry storms would bunch them.
	t.Run("E", func(t *testing.T) { check(t, base[4], 12*time.Second) })
	t.Run("others", func(t *testing.T) {
		for _, s := range base[:4] {
			t.Run(s.Name, func(t *testing.T) {
				t.Parallel()
				check(t, s, 6*time.Second)
			})
		}
	})
	b, e := rows["B"], rows["E"]
	if b.RateLimited == 0 {
		t.Error("B drew no 429s from 20 simultaneous requests")
	}
	// E's 429s are judged against B's, measured on the same machine in the
	// same run: a loaded machine's timer delays can bunch a few paced sends,
	// but pacing must still draw a small fraction of what firing at once does.
	if e.Completed != n || e.RateLimited*10 > b.RateLimited {
		t.Errorf("E completed %d/%d with %d 429s against B's %d; pacing at the quota should complete all and draw under a tenth of B's", e.Completed, n, e.RateLimited, b.RateLimited)
	}
	if e.WallS < e.FloorS*0.9 {
		t.Errorf("E took %v s, under the quota's floor of %v s", e.WallS, e.FloorS)
	}
}

func TestGivesUpOnAnswersARetryCannotFix(t *testing.T) {
	target, stop, err := Simulated(t.Context(), 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	target.Deployment = "no-such-deployment"
	r := Baselines()[1].Run(t.Context(), target, 3, 10)
	if r.Completed != 0 || r.GaveUp != 3 || r.Attempts != 3 {
		t.Errorf("a 404 was retried or counted wrong: %+v", r)
	}
}

func TestStopsWhenCancelled(t *testing.T) {
	target, stop, err := Simulated(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	begin := time.Now()
	r := Baselines()[3].Run(ctx, target, 30, 10) // D, one at a time: would take a minute
	if took := time.Since(begin); took > 3*time.Second {
		t.Errorf("ran %v after its context ended", took)
	}
	if r.Completed+r.GaveUp != 30 {
		t.Errorf("%+v: every request should be counted", r)
	}
}

func TestPrintAndJSON(t *testing.T) {
	rows := []Row{
		{Strategy: "A", Completed: 53, GaveUp: 37, RateLimited: 676, Attempts: 729, P50S: 26.9, P99S: 104.7, WallS: 206.5, EffectiveRPM: 15.4, FloorS: 90},
		{Strategy: "B", GaveUp: 90, RateLimited: 900, Attempts: 900, WallS: 10, FloorS: 90},
	}
	var b bytes.Buffer
	Print(&b, rows)
	out := b.String()
	for _, want := range []string{"effective RPM", "53/90", "26.9 s", "104.7 s", "206.5 s", "15.4", "0/90", "floor: 90 requests at the quota take 90.0 s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	j, _ := json.Marshal(rows[0])
	if !strings.Contains(string(j), `"rate_limited":676`) || !strings.Contains(string(j), `"effective_rpm":15.4`) {
		t.Errorf("JSON %s", j)
	}
}

func TestTargetHidesKey(t *testing.T) {
	tg := Target{Endpoint: "http://127.0.0.1:1", Deployment: "gpt-4o", APIKey: "sekrit-key", RPM: 60}
	for _, s := range []string{fmt.Sprint(tg), fmt.Sprintf("%+v", tg), fmt.Sprintf("%v", &tg)} {
		if strings.Contains(s, "sekrit") {
			t.Errorf("printed the key: %s", s)
		}
	}
}
