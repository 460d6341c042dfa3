// Package learning is the model the fleet learns of each deployment's
// counter from Azure's headers: the ratio of what Azure charges to what
// the budget reserves, the safety share kept back for its error, whether
// Azure's token window slides, and the pacing allowance for the time
// between an admission and the call's arrival. It is arithmetic only: the
// budget's router takes the readings and keeps the result in the store
// (budget.Calibrator), so one container's learning serves all.
package learning

import (
	"math"
	"time"
)

// Calibration is the learned part of one deployment's model. The zero
// value is "nothing learned": the configured margin and a cautious
// pacing allowance.
type Calibration struct {
	// Ratio is what Azure charges for a call ÷ what we reserve for it,
	// from the slope of its token count against the fleet's reservations;
	// 0 when unknown (taken as 1). Weight is how many readings stand
	// behind it.
	Ratio  float64 `json:"ratio,omitempty"`
	Weight float64 `json:"weight,omitempty"`
	// Safety is the share of the ratio-corrected limit kept back: the
	// configured margin's at first (and after any sign of charging more
	// than we allow for), then tightened toward the floor while the ratio
	// holds. 0 means not yet tightened.
	Safety float64 `json:"safety,omitempty"`
	// Lag is the allowance for the time between an admission and the
	// call leaving this side, as measured; 0 means none measured yet.
	// Extra is what requests 429s taught beyond it: the part of the way
	// (the network, the server's own queue) no client can time. Request
	// pacing allows for their sum in every window.
	Lag   time.Duration `json:"lag,omitempty"`
	Extra time.Duration `json:"extra,omitempty"`
	// Readings counts the lag readings folded in, and Seen is the
	// highest of them while there are fewer than minLagReadings: until
	// then the pacing keeps the cold allowance, a margin no one measured.
	Readings int           `json:"readings,omitempty"`
	Seen     time.Duration `json:"seen,omitempty"`
	// Open is the fleet's pairs of the token window being read.
	Open Fit `json:"open"`
	// Sliding is set once a window's answers showed Azure's token window
	// does not begin with ours: reservations then count the token window
	// as sliding (Limits.Sliding).
	Sliding bool `json:"sliding,omitempty"`
	// Widened is when a 429 or a high reading last widened the model,
	// Slowed when a requests 429 last raised Extra, and Tightened when the
	// safety share last came down.
	Widened   time.Time `json:"widened,omitzero"`
	Slowed    time.Time `json:"slowed,omitzero"`
	Tightened time.Time `json:"tightened,omitzero"`
	Updated   time.Time `json:"updated,omitzero"`
}

// Reading is what one process saw of a deployment since it last told the
// store: the pairs of (tokens the fleet held, tokens Azure counted) of its
// answers, by token window, the highest admission-to-send lag, and the
// 429s.
type Reading struct {
	Fits        []Fit // oldest first
	Lag         time.Duration
	Tokens429   bool
	Requests429 bool
}

// Fit accumulates pairs of one token window: x what the store held once a
// call was admitted, y what Azure's headers said it had counted once it
// admitted the call. Within a window y = ratio × x + c, where c is use the
// store never saw (other clients) less what was admitted but had not yet
// arrived (header lag); the slope is the ratio, whatever c is. The sums
// merge across the fleet.
//
// Early counts the pairs taken while the fleet held under a tenth of the
// limit (the window had just begun), and Carried those of them where
// Azure already counted over half of it: its window did not begin with
// ours, so it slides (or starts elsewhere).
type Fit struct {
	Window                   int64   `json:"w"`
	N, SX, SY, SXX, SYY, SXY float64 `json:",omitempty"`
	Early, Carried           float64 `json:",omitempty"`
}

// Add counts one pair.
func (f *Fit) Add(x, y float64) {
	f.N++
	f.SX, f.SY = f.SX+x, f.SY+y
	f.SXX, f.SYY, f.SXY = f.SXX+x*x, f.SYY+y*y, f.SXY+x*y
}

// Observe counts one pair of a deployment whose token limit is limit.
func (f *Fit) Observe(x, y, limit float64) {
	f.Add(x, y)
	if x < limit/10 {
		f.Early++
		if y > limit/2 {
			f.Carried++
		}
	}
}

func (f *Fit) merge(g Fit) {
	f.N, f.SX, f.SY = f.N+g.N, f.SX+g.SX, f.SY+g.SY
	f.SXX, f.SYY, f.SXY = f.SXX+g.SXX, f.SYY+g.SYY, f.SXY+g.SXY
	f.Early, f.Carried = f.Early+g.Early, f.Carried+g.Carried
}

// carries reports whether the window's early pairs show Azure still
// counting the window before.
func (f Fit) carries() bool { return f.Early >= 2 && 2*f.Carried >= f.Early }

// Slope is the window's ratio and whether the pairs can be believed: at
// least minPairs of them, x spread over more than a sliver of the limit,
// and y following x closely (r² ≥ 0.9). A server whose window slides, or
// whose fixed one starts elsewhere, breaks the straight line, and the
// window teaches nothing.
func (f Fit) Slope(limit float64) (float64, bool) {
	if f.N < minPairs {
		return 0, false
	}
	vx := f.SXX/f.N - (f.SX/f.N)*(f.SX/f.N)
	vy := f.SYY/f.N - (f.SY/f.N)*(f.SY/f.N)
	cov := f.SXY/f.N - (f.SX/f.N)*(f.SY/f.N)
	if vx <= 0 || vy <= 0 || math.Sqrt(vx) < limit/50 || cov*cov < 0.9*vx*vy {
		return 0, false
	}
	return cov / vx, true
}

// Policy is how fast the model moves. The zero value of each
// field has a default.
type Policy struct {
	// Ceiling is the safety share at first and after widening: 1 −
	// the configured margin (0.15 by default).
	Ceiling float64
	// Floor is the least safety share it tightens to (DefaultSafetyFloor).
	Floor float64
	// Window is the token window; the safety share comes down by a step
	// at most once a window, and the lag allowance halves its excess over
	// what is measured once a window.
	Window time.Duration
	// ColdLag is the pacing allowance before anything is measured
	// (DefaultColdLag, scaled with a compressed Window).
	ColdLag time.Duration
}

const (
	// DefaultSafetyFloor is the least share of a deployment's limit kept
	// back once the estimate has proved right.
	DefaultSafetyFloor = 0.03
	// DefaultColdLag paces a deployment no call has measured yet: an
	// admission may reach the server this much later than the one before.
	// It is a margin on the request windows for a fleet's first seconds,
	// when every container starts at once on hosts too busy to send what
	// they reserved on time: the 1 s window admits two thirds of its
	// limit, the 10 s one 95%. It costs time only where requests, not
	// tokens, bind, and only until minLagReadings calls have measured the
	// lag, which then replaces it.
	DefaultColdLag = 500 * time.Millisecond
	// minLagReadings is how many readings of the lag the cold allowance
	// waits for before it gives way to what they measured.
	minLagReadings = 3
	// tightenStep is the factor the safety share is multiplied by each
	// quiet window: 0.15 reaches 0.03 in four.
	tightenStep = 0.6
	// lagHalfLife is how long the measured lag's excess over what is seen
	// takes to halve; what a 429 taught takes ten times as long.
	lagHalfLife = time.Minute
	// minPairs is the fewest answers a window's slope is read from.
	minPairs = 6
	// minWeight is how many answers a ratio needs before the safety share
	// may come down on it.
	minWeight = 8
	// maxWeight keeps the ratio able to follow a change within a few
	// windows.
	maxWeight = 200
	// MinRatio and MaxRatio bound the ratios believed: beyond them the
	// readings are more likely broken than Azure's estimate that far from
	// ours.
	MinRatio, MaxRatio = 0.5, 2.0
	// DefaultCeiling is the safety share before anything is learned: what
	// the default margin keeps back.
	DefaultCeiling = 0.15
	// azureWindow is Azure's token window, the default Window.
	azureWindow = time.Minute
)

func (p Policy) defaults() Policy {
	if p.Ceiling <= 0 || p.Ceiling >= 1 {
		p.Ceiling = DefaultCeiling
	}
	if p.Floor <= 0 {
		p.Floor = DefaultSafetyFloor
	}
	p.Floor = min(p.Floor, p.Ceiling)
	if p.Window <= 0 {
		p.Window = azureWindow
	}
	if p.ColdLag <= 0 {
		// The same share of a compressed window's 1 s request window.
		p.ColdLag = time.Duration(float64(DefaultColdLag) * float64(p.Window) / float64(azureWindow))
	}
	return p
}

// ratio is the ratio in force: 1 until learned.
func (c Calibration) ratio() float64 {
	if c.Ratio <= 0 {
		return 1
	}
	return c.Ratio
}

// safety is the share kept back in force.
func (c Calibration) safety(p Policy) float64 {
	if c.Safety <= 0 {
		return p.Ceiling
	}
	return c.Safety
}

// RatioInForce is the ratio reservations are corrected by: 1 until
// learned.
func (c Calibration) RatioInForce() float64 { return c.ratio() }

// SafetyInForce is the share of the ratio-corrected limit kept back now.
func (c Calibration) SafetyInForce(p Policy) float64 { return c.safety(p.defaults()) }

// LagInForce is the admission-to-send allowance measured, or the cold one
// until enough calls have measured it; Allowance adds what 429s taught.
func (c Calibration) LagInForce(p Policy) time.Duration { return c.lag(p.defaults()) }

// Margin is the share of the limit, as we count it, that reservations may
// use: what is left after the safety share, divided by the ratio (Azure
// charging 0.9 of our estimate lets us reserve past the limit itself).
func (c Calibration) Margin(p Policy) float64 {
	p = p.defaults()
	return (1 - c.safety(p)) / c.ratio()
}

// Allowance is the pacing allowance in force.
func (c Calibration) Allowance(p Policy) time.Duration {
	return c.lag(p.defaults()) + c.Extra
}

func (c Calibration) lag(p Policy) time.Duration {
	if c.Lag <= 0 {
		return p.ColdLag
	}
	return c.Lag
}

// Apply folds a reading into the calibration at now; limit is the
// deployment's token limit.
//   - A window's pairs are summed across the fleet, and its slope read
//     once a reading of a later window arrives.
//   - The ratio is a weighted mean of slopes; a slope above the ratio in
//     force by more than half the safety share, or a tokens 429, puts the
//     safety share back at the ceiling at once.
//   - Early pairs that show Azure still counting the last window set
//     Sliding (and widen).
//   - Once a window without widening, with enough answers behind the
//     ratio, the safety share comes down a step toward the floor.
//   - The lag allowance starts at the cold one, a margin, and keeps it
//     until minLagReadings readings have measured the lag; it then drops
//     at once to the highest of them. From there it rises at once to any
//     lag seen and otherwise halves its excess over what is seen once a
//     minute. A requests 429 doubles the extra allowance (at least a
//     tenth of the 1 s window, at most all of it, once per 1 s window),
//     which halves every ten minutes.
func (c Calibration) Apply(r Reading, limit int64, p Policy, now time.Time) Calibration {
	p = p.defaults()
	widen := r.Tokens429
	for _, f := range r.Fits {
		switch {
		case f.N == 0 || f.Window < c.Open.Window:
			// Nothing to add, or a window already read.
		case f.Window == c.Open.Window:
			c.Open.merge(f)
			if c.Open.carries() && !c.Sliding {
				// Seen while the window is still open: count our window
				// as sliding from now on.
				c.Sliding, widen = true, true
			}
		default:
			if ratio, ok := c.Open.Slope(float64(limit)); ok && ratio >= MinRatio && ratio <= MaxRatio {
				widen = c.learn(ratio, c.Open.N, p) || widen
			}
			c.Open = f
			if c.Open.carries() && !c.Sliding {
				c.Sliding, widen = true, true
			}
		}
	}
	switch {
	case widen:
		c.Safety, c.Widened = p.Ceiling, now
	case c.Weight >= minWeight && now.Sub(later(c.Widened, c.Tightened)) >= p.Window:
		c.Safety = max(p.Floor, c.safety(p)*tightenStep)
		c.Tightened = now
	}

	// Lag belongs to machines and networks, not to the window's length:
	// it fades by the clock even when the window is compressed.
	lag, extra := c.lag(p), c.Extra
	since := now.Sub(c.Updated)
	switch {
	case r.Lag <= 0:
	case c.Readings < minLagReadings:
		// The cold margin holds until enough calls have measured the
		// lag; then it gives way at once to the highest they saw.
		c.Readings++
		c.Seen = max(c.Seen, r.Lag)
		if c.Readings == minLagReadings {
			lag, c.Seen = c.Seen, 0
		}
	default:
		if !c.Updated.IsZero() && since > 0 {
			// Halve the excess over what is seen once a minute.
			f := math.Exp2(-float64(since) / float64(lagHalfLife))
			lag = r.Lag + time.Duration(float64(max(0, lag-r.Lag))*f)
		}
	}
	if !c.Updated.IsZero() && since > 0 {
		// What a 429 taught fades ten times slower: it was not measured,
		// so nothing else can show it is past.
		extra = time.Duration(float64(extra) * math.Exp2(-float64(since)/float64(10*lagHalfLife)))
	}
	lag = max(lag, r.Lag, time.Millisecond)
	if r.Requests429 {
		// 429s of one request window are one lesson: the fleet's
		// processes report them together, and doubling on each would
		// compound. It never passes the 1 s window itself.
		if now.Sub(c.Slowed) >= p.Window/60 {
			extra = min(p.Window/60, max(2*extra, p.Window/600))
			c.Slowed = now
		}
		c.Widened = now
	}
	c.Lag, c.Extra = lag, extra
	c.Updated = now
	return c
}

// learn folds a window's slope read from n answers into the ratio, and
// reports whether it says Azure charges more than the model allows for.
func (c *Calibration) learn(ratio, n float64, p Policy) (widen bool) {
	if ratio > c.ratio()*(1+c.safety(p)/2) {
		// Believe it now rather than average it in.
		c.Ratio, c.Weight = ratio, min(maxWeight, n)
		return true
	}
	w := c.Weight
	if c.Ratio <= 0 {
		w = 0
	}
	c.Ratio = (c.Ratio*w + ratio*n) / (w + n)
	c.Weight = min(maxWeight, w+n)
	return false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
