package budget

import (
	"maps"
	"sync"
)

// counters count what the router did; Router.Metrics reads them.
type counters struct {
	mu sync.Mutex
	s  MetricsSnapshot
}

// MetricsSnapshot is a copy of the counters.
type MetricsSnapshot struct {
	Calls     int64 // calls placed: once each, whatever its attempts or store round trips
	Completed int64 // calls answered 2xx
	Failed    int64 // calls that ended in an error
	Shed      int64 // calls that could not get budget before their deadline
	Waits     int64 // times a call waited for room
	Retries   int64 // attempts after the first
	// RateLimited counts 429s by cause.
	RateLimited map[Cause]int64
	// ServerErrors counts 5xx and 408 answers; TransportErrors, calls that
	// got no answer.
	ServerErrors    int64
	TransportErrors int64
	BreakerTrips    int64
	// EffectiveLimits counts token limit headers below the configured one.
	EffectiveLimits int64
	// AbsorbedTokens is use Azure reported that the store had not seen.
	AbsorbedTokens int64
	// ByDeployment counts answered calls per deployment.
	ByDeployment map[string]int64
	// RateLimitedBy counts 429s per deployment, then cause; ShedBy the
	// shed calls per priority class.
	RateLimitedBy map[string]map[Cause]int64
	ShedBy        map[Class]int64
	// StoreWritesFailed counts the writes after a call (Lease.Done's:
	// WriteSettle, WriteBreaker, ...) the store did not take though
	// asked again, per deployment, then write.
	StoreWritesFailed map[string]map[string]int64
}

func newMetrics() *counters {
	return &counters{s: MetricsSnapshot{RateLimited: map[Cause]int64{}, ByDeployment: map[string]int64{},
		RateLimitedBy: map[string]map[Cause]int64{}, ShedBy: map[Class]int64{}, StoreWritesFailed: map[string]map[string]int64{}}}
}

func (m *counters) add(f func(*MetricsSnapshot)) {
	m.mu.Lock()
	f(&m.s)
	m.mu.Unlock()
}

// Metrics is a copy of the router's counters, since it was made.
func (r *Router) Metrics() MetricsSnapshot {
	if r.metrics == nil {
		return newMetrics().snapshot() // a zero Router: nothing counted
	}
	return r.metrics.snapshot()
}

// snapshot copies the counters.
func (m *counters) snapshot() MetricsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.s
	s.RateLimited = make(map[Cause]int64, len(m.s.RateLimited))
	for k, v := range m.s.RateLimited {
		s.RateLimited[k] = v
	}
	s.ByDeployment = maps.Clone(m.s.ByDeployment)
	s.RateLimitedBy = make(map[string]map[Cause]int64, len(m.s.RateLimitedBy))
	for k, v := range m.s.RateLimitedBy {
		s.RateLimitedBy[k] = maps.Clone(v)
	}
	s.ShedBy = maps.Clone(m.s.ShedBy)
	s.StoreWritesFailed = make(map[string]map[string]int64, len(m.s.StoreWritesFailed))
	for k, v := range m.s.StoreWritesFailed {
		s.StoreWritesFailed[k] = maps.Clone(v)
	}
	return s
}

// writeFailed counts a write after a call the store did not take.
func (m *counters) writeFailed(deployment, write string) {
	m.add(func(s *MetricsSnapshot) {
		if s.StoreWritesFailed[deployment] == nil {
			s.StoreWritesFailed[deployment] = map[string]int64{}
		}
		s.StoreWritesFailed[deployment][write]++
	})
}

// shed counts a call of class c that could not get budget in time.
func (m *counters) shed(c Class) {
	m.add(func(s *MetricsSnapshot) {
		s.Shed++
		s.ShedBy[c]++
	})
}

// limited counts a 429 from deployment d.
func (m *counters) limited(d string, cause Cause) {
	m.add(func(s *MetricsSnapshot) {
		s.RateLimited[cause]++
		if s.RateLimitedBy[d] == nil {
			s.RateLimitedBy[d] = map[Cause]int64{}
		}
		s.RateLimitedBy[d][cause]++
	})
}
