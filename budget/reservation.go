package budget

import (
	"time"

	"github.com/headroom-agent/headroom/budget/learning"
)

// Cost is what one call charges.
type Cost struct {
	Tokens   int64
	Requests int64 // 0 counts as 1
}

func (c Cost) requests() int64 { return max(1, c.Requests) }

// Limits are a deployment's configured limits.
type Limits struct {
	// Tokens per window (TPM with the default one-minute window).
	Tokens int64
	// Requests per window (RPM); the 1 s and 10 s windows allow
	// Requests/60 and Requests/6, at least one each, as Azure does.
	Requests int64
	// Margin is the share of the token limit, as we count it,
	// reservations may use; Azure's own estimate is approximate. 0 means
	// DefaultMargin. learning.Calibration may set it past 1 (up to MaxMargin) when
	// Azure is seen to charge less than we reserve.
	Margin float64
	// Spacing, when set, is the least time between two admissions on the
	// deployment. Requests spaced at the 1 s window's rate never break a
	// server's 1 s or 10 s window, wherever its boundaries fall; windows
	// counted on our side alone can admit two calls a millisecond apart
	// across our boundary, which may be inside the server's window.
	Spacing time.Duration
	// Sliding counts the token window as a server whose window slides
	// would: besides this window's charges, the part of the last one's
	// still inside a window's length of now, taken as spread evenly.
	// Against a fixed server it is merely careful; against a sliding one
	// it is what keeps a window's burst from meeting the last one's.
	Sliding bool
}

// DefaultMargin keeps 15% of each token limit back for the difference
// between our estimate and Azure's: the learned model's share kept back
// before it has learned anything.
const DefaultMargin = 1 - learning.DefaultCeiling

// TokenCap is the most tokens reservations may hold in one window, given
// an effective limit observed from headers (0 when there is none).
func (l Limits) TokenCap(effective int64) int64 {
	lim := l.Tokens
	if effective > 0 && effective < lim {
		lim = effective
	}
	return int64(float64(lim) * l.MarginInForce())
}

// MaxMargin bounds Limits.Margin. A calibrated margin may pass 1, when
// Azure charges less than we reserve, but never by more than the least
// ratio calibration believes allows.
const MaxMargin = 1 / learning.MinRatio

// MarginInForce is Margin, or DefaultMargin when it is unset or out of
// range.
func (l Limits) MarginInForce() float64 {
	if l.Margin <= 0 || l.Margin > MaxMargin {
		return DefaultMargin
	}
	return l.Margin
}

// requestSpacing is the admission interval that keeps both request
// windows (the 1 s and 10 s ones, scaled to window) whatever their phase,
// stretched by slack (0.01 is 1%) and by jitter: the server counts a call
// when it arrives, and the time from reservation to arrival varies by
// about that much, so two calls reserved one interval apart may arrive
// closer.
func (l Limits) requestSpacing(window time.Duration, slack float64, jitter time.Duration) time.Duration {
	one := window / 60 / time.Duration(l.PerSecond())
	ten := window / 6 / time.Duration(l.PerTenSeconds())
	return time.Duration(float64(max(one, ten))*(1+slack)) + jitter
}

// pacedSpacing is the admission interval that keeps both request windows
// against a server whose windows may slide, when a call reaches the server
// up to lag later than another admitted before it: then the calls one
// server window counts were admitted within the window plus lag, so the
// interval is (window + lag) ÷ the window's limit, stretched by slack.
// Unlike requestSpacing's jitter, lag is spread over the window's calls
// rather than added to every interval.
func (l Limits) pacedSpacing(window time.Duration, slack float64, lag time.Duration) time.Duration {
	one := (window/60 + lag) / time.Duration(l.PerSecond())
	ten := (window/6 + lag) / time.Duration(l.PerTenSeconds())
	return time.Duration(float64(max(one, ten)) * (1 + slack))
}

// PerSecond and PerTenSeconds are the request windows' limits.
func (l Limits) PerSecond() int64     { return max(1, l.Requests/60) }
func (l Limits) PerTenSeconds() int64 { return max(1, l.Requests/6) }

// Reservation is an admitted charge: what it charged and to which windows.
// Windows are numbered from the Unix epoch in units of their length, by
// the store's clock (Redis TIME for the Redis store).
type Reservation struct {
	ID         string
	Deployment string
	Tokens     int64
	Requests   int64
	Window     int64 // token window
	Window1s   int64 // 1 s request window (scaled with the token window)
	Window10s  int64 // 10 s request window
	// At is the store's clock when the reservation was made.
	At time.Time
	// Held is what the token window held once this reservation was
	// admitted, the whole fleet's, and Absorbed the part of it that was
	// use absorbed from Azure's headers; Carried is the part of the last
	// window's charges a sliding window would still count then. All 0 when
	// unknown (a resent id).
	Held, Absorbed, Carried int64
}

// Usage is one deployment's state at one instant of the store's clock.
type Usage struct {
	Deployment string
	Now        time.Time
	Window     int64
	// Reserved is the tokens held in the current window; Settled is the
	// part of that whose calls completed and Used what those calls really
	// used (Settled/Used is the reservation error).
	Reserved int64
	Settled  int64
	Used     int64
	// Absorbed is the part of Reserved absorbed from Azure's headers.
	// Carried is the part of the last window's charges a sliding window
	// would still count now (see Limits.Sliding).
	Absorbed, Carried int64
	// Requests in the current 1 s and 10 s windows.
	Requests1s  int64
	Requests10s int64
	// EffectiveLimit is the token limit last observed from headers, or 0.
	EffectiveLimit int64
	// OpenUntil is when the breaker closes; zero when it is closed.
	OpenUntil time.Time
}

// Policy is what Settle does with the unused part of an estimate.
type Policy string

const (
	// Hold keeps the pessimistic charge for the whole window: nothing says
	// Azure gives unused estimate back inside the minute.
	Hold Policy = "hold"
	// Refund gives the unused part back to the window it was charged to.
	Refund Policy = "refund"
)

// DefaultWindow is Azure's token window.
const DefaultWindow = time.Minute

// MinWindow keeps the 1 s request window at one millisecond or more.
const MinWindow = 60 * time.Millisecond

// SpacingMS is Spacing in whole milliseconds, as the stores count it,
// rounded up: rounding down would admit a little faster than the windows
// allow.
func (l Limits) SpacingMS() int64 {
	return int64((l.Spacing + time.Millisecond - 1) / time.Millisecond)
}

// windowLengths returns the token, 1 s and 10 s window lengths in ms.
func windowLengths(w time.Duration) (tokens, oneSec, tenSec int64) {
	ms := w.Milliseconds()
	return ms, ms / 60, ms / 6
}
