package budget_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/internal/redistest"
)

// TestRequestsAzureCountedAreAbsorbedOnce: ten calls in flight, answered
// by a deployment whose request window also holds five requests of
// another client. Each answer says the window holds fifteen; the store
// must end up counting fifteen, not the gap each call saw when it was
// chosen added once per call, and none of the five in the 1 s window,
// which Azure's count does not place.
func TestRequestsAzureCountedAreAbsorbedOnce(t *testing.T) {
	srv, err := redistest.Start()
	if err != nil {
		t.Skipf("cannot start a redis-server of its own: %v", err)
	}
	t.Cleanup(srv.Kill)
	store := openStore(t, srv)
	r := router(t, store, config(t, "", "a:1000000"))

	const inFlight, others, limit = 10, 5, 1000
	var leases []*budget.Lease
	for range inFlight {
		leases = append(leases, acquire(t, r, budget.Call{Tokens: 100}))
	}
	h := http.Header{
		"X-Ratelimit-Limit-Requests":     {strconv.Itoa(limit)},
		"X-Ratelimit-Remaining-Requests": {strconv.Itoa(limit - inFlight - others)},
	}
	for _, l := range leases {
		if err := l.Done(bg, budget.Outcome{Sent: true, Status: http.StatusOK, UsedTokens: 80, Header: h}); err != nil {
			t.Fatal(err)
		}
	}
	us, err := store.Usage(bg, leases[0].Deployment.QuotaKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := us[0].Requests10s, int64(inFlight+others); got != want {
		t.Errorf("the 10 s window counts %d requests, want %d: Azure's count was absorbed more than once", got, want)
	}
	if got := us[0].Requests1s; got > inFlight {
		t.Errorf("the 1 s window counts %d requests, want at most the %d reserved", got, inFlight)
	}
}
