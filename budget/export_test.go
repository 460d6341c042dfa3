package budget

import "time"

// The spacings, for tests of their arithmetic.
func (l Limits) RequestSpacing(window time.Duration, slack float64, jitter time.Duration) time.Duration {
	return l.requestSpacing(window, slack, jitter)
}

func (l Limits) PacedSpacing(window time.Duration, slack float64, lag time.Duration) time.Duration {
	return l.pacedSpacing(window, slack, lag)
}

// NewMemDriver is the memory driver, for the conformance suite and for
// tests that wrap a driver.
func NewMemDriver(o MemOptions) Driver { return newMemDriver(o) }

// MemFootprint counts what a memory driver keeps for deployment.
func MemFootprint(d Driver, deployment string) int { return d.(*memDriver).Footprint(deployment) }

// The feedback readers the router uses, for tests of the headers.
var (
	AskedWait = askedWait
	Classify  = classify
)
