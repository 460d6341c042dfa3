package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// ResultFile is the name an agent's run writes its result under.
const ResultFile = "result.json"

// maxResult bounds what one result file may hold: a long run is a few
// hundred kilobytes.
const maxResult = 64 << 20

// fastCallMS is a call latency no deployed model answers within: runs
// whose calls average less were answered by a simulator or a cassette,
// and their pace says nothing of a fleet's.
const fastCallMS = 100

// Percentile is the share of runs a measured plan covers: agent load
// grows with a run's length, so the fleet's worst minutes are its long
// runs overlapping, and the mean would plan for a minute that rarely
// comes.
const Percentile = 99

// Call is what a plan reads of one call's report in a result.json (the
// fields of llm.Report it needs).
type Call struct {
	Type           string `json:"type"`
	MaxTokens      int64  `json:"max_tokens"`
	N              int64  `json:"n"`
	PromptTokens   int64  `json:"prompt_tokens"`
	TokensReserved int64  `json:"tokens_reserved"`
	TokensUsed     int64  `json:"tokens_used"`
	LatencyMS      int64  `json:"latency_ms"`
}

// n is the call's number of choices, 0 read as 1.
func (c Call) n() int64 { return max(1, c.N) }

// flatCharge is what the call would have been charged with max_tokens
// flat: its charge with its own cap replaced.
func (c Call) flatCharge(flat int64) int64 {
	return c.TokensReserved - c.MaxTokens*c.n() + flat*c.n()
}

// Run is one agent's run as its result.json records it.
type Run struct {
	File      string
	Steps     int
	ElapsedMS int64
	// Calls are the calls that were charged, the run's first call first.
	Calls []Call
	// Replayed is a run that followed a learned run and asked the model
	// for no step (a summary it may still have made).
	Replayed bool
}

// Skipped is a result file a plan could not use, and why.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// RunSet is the runs found under a directory.
type RunSet struct {
	Dir     string
	Runs    []Run
	Skipped []Skipped
}

// ReadRuns reads every result.json under dir, at any depth, as one run
// each. Files it cannot use are skipped and listed; no usable run at all
// is an error naming dir.
func ReadRuns(dir string) (*RunSet, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, unwrapPath(err, dir))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory: give the directory the runs wrote their %s files under", dir, ResultFile)
	}
	set := &RunSet{Dir: dir}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			set.Skipped = append(set.Skipped, Skipped{path, unwrapPath(err, path).Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || d.Name() != ResultFile {
			return nil
		}
		r, err := ReadRun(path)
		if err != nil {
			set.Skipped = append(set.Skipped, Skipped{path, err.Error()})
			return nil
		}
		set.Runs = append(set.Runs, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(set.Runs) == 0 {
		if len(set.Skipped) == 0 {
			return set, fmt.Errorf("%s: no usable runs: no %s under it (headroom run --out DIR writes one a run)", dir, ResultFile)
		}
		return set, fmt.Errorf("%s: no usable runs: %d %s files skipped, the first %s: %s", dir, len(set.Skipped), ResultFile, set.Skipped[0].File, set.Skipped[0].Reason)
	}
	return set, nil
}

// ReadRun reads one result.json.
func ReadRun(path string) (Run, error) {
	data, err := safefile.ReadFile(path, maxResult, "a result file")
	if err != nil {
		return Run{}, unwrapPath(err, path)
	}
	var res struct {
		Steps []struct {
			Calls []Call `json:"calls"`
		} `json:"steps"`
		Calls  []Call `json:"calls"`
		Totals *struct {
			Steps     int   `json:"steps"`
			ElapsedMS int64 `json:"elapsed_ms"`
		} `json:"totals"`
		Learned *struct {
			Replayed int `json:"replayed"`
			Asked    int `json:"asked"`
		} `json:"learned"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return Run{}, fmt.Errorf("not a run's result: %v", err)
	}
	switch {
	case res.Totals == nil:
		return Run{}, errors.New("not a run's result: no totals")
	case res.Totals.ElapsedMS <= 0:
		return Run{}, fmt.Errorf("totals.elapsed_ms is %d: a run takes time", res.Totals.ElapsedMS)
	case res.Totals.Steps < 0:
		return Run{}, fmt.Errorf("totals.steps is %d", res.Totals.Steps)
	}
	r := Run{File: path, Steps: res.Totals.Steps, ElapsedMS: res.Totals.ElapsedMS}
	r.Replayed = res.Learned != nil && res.Learned.Replayed > 0 && res.Learned.Asked == 0
	// The calls outside steps are the plans and the answer: a run starts
	// with its plan, when it made one, and ends with its answer.
	outside := res.Calls
	if len(outside) > 0 && outside[0].Type == calltypes.Planning {
		r.Calls = append(r.Calls, outside[0])
		outside = outside[1:]
	}
	for _, s := range res.Steps {
		r.Calls = append(r.Calls, s.Calls...)
	}
	r.Calls = append(r.Calls, outside...)
	charged := r.Calls[:0]
	for _, c := range r.Calls {
		switch {
		case c.TokensReserved == 0: // never admitted (shed, refused): it cost nothing
			continue
		case c.Type == "":
			return Run{}, errors.New("a call has no type")
		case c.TokensReserved < 0 || c.MaxTokens <= 0 || c.N < 0:
			return Run{}, fmt.Errorf("a %s call has no cap or charge (max_tokens %d, n %d, tokens_reserved %d)", c.Type, c.MaxTokens, c.N, c.TokensReserved)
		case c.TokensReserved < c.MaxTokens*c.n():
			return Run{}, fmt.Errorf("a %s call was charged %d, under its cap of %d: not a charge headroom makes", c.Type, c.TokensReserved, c.MaxTokens*c.n())
		}
		charged = append(charged, c)
	}
	r.Calls = charged
	if len(r.Calls) == 0 && !r.Replayed {
		return Run{}, errors.New("no charged calls: the run made no model call")
	}
	return r, nil
}

// unwrapPath drops the path a file error repeats, since the skipped list
// names the file already.
func unwrapPath(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	if s, ok := strings.CutPrefix(err.Error(), path+": "); ok {
		return errors.New(s)
	}
	return err
}

// Runs is what a plan measured from runs.
type Runs struct {
	Dir     string    `json:"dir"`
	Runs    int       `json:"runs"`
	Skipped []Skipped `json:"skipped,omitempty"`
	// Percentile is the one the plan's figures are taken at.
	Percentile float64 `json:"percentile"`
	// MeasuredStepsPerMinute is the runs' own pace, Σ steps ÷ Σ minutes;
	// Retimed says the runs were slowed or sped evenly to the plan's
	// StepsPerMinute.
	MeasuredStepsPerMinute float64 `json:"measured_steps_per_minute"`
	Retimed                bool    `json:"retimed"`
	TokensPerMinute        Stat    `json:"tokens_per_minute"`
	FlatTokensPerMinute    Stat    `json:"flat_tokens_per_minute"`
	CallsPerMinute         Stat    `json:"calls_per_minute"`
	PerRun                 []Rate  `json:"per_run"`
	// Replayed counts the runs that followed a learned run with no step
	// call; HitRate is their share of the runs. The figures above are
	// the other runs' (the model's): an agent may always miss.
	Replayed int     `json:"replayed,omitempty"`
	HitRate  float64 `json:"hit_rate,omitempty"`
	// TasksPerHour is how many runs the budget completes an hour, by the
	// mean tokens a run reserves: with the model on every run, and at the
	// hit rate. A replayed run is short, so its agent may ask more a
	// minute while the fleet asks less a task.
	TasksPerHour        float64 `json:"tasks_per_hour,omitempty"`
	TasksPerHourLearned float64 `json:"tasks_per_hour_learned,omitempty"`
}

// Stat is a figure across runs at the plan's percentile and on average.
type Stat struct {
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// Rate is one run's demand a minute.
type Rate struct {
	File                string  `json:"file"`
	Steps               int     `json:"steps"`
	Calls               int     `json:"calls"`
	Minutes             float64 `json:"minutes"`
	Tokens              int64   `json:"tokens_reserved"`
	TokensPerMinute     float64 `json:"tokens_per_minute"`
	FlatTokensPerMinute float64 `json:"flat_tokens_per_minute"`
	CallsPerMinute      float64 `json:"calls_per_minute"`
}

// FromRuns plans from measured runs: each run's reserved tokens over its
// minutes is one agent's demand, and the plan takes the p99 across the
// runs (the mean is kept beside it). The flat-cap figures charge each of
// the same calls its charge less its cap × n plus the flat cap × n.
func FromRuns(b Budget, set *RunSet, o Options) (*Plan, error) {
	if set == nil || len(set.Runs) == 0 {
		return nil, errors.New("runs: none to measure")
	}
	asked, replayed := splitRuns(set.Runs)
	if len(asked) == 0 {
		return nil, fmt.Errorf("%s: every run was replayed from a learned run: plan from runs that include the model's (the first run of each task)", set.Dir)
	}
	whole := set
	set = &RunSet{Dir: whole.Dir, Runs: asked, Skipped: whole.Skipped}
	flat := o.flat()
	var steps int
	var elapsed float64
	for _, r := range set.Runs {
		steps += r.Steps
		elapsed += float64(r.ElapsedMS) / 60000
	}
	measured := float64(steps) / elapsed
	stretch := 1.0 // how much longer each run's minutes are taken to be
	spm := measured
	switch {
	case o.StepsPerMinute < 0 || math.IsNaN(o.StepsPerMinute):
		return nil, fmt.Errorf("steps per minute %v: an agent's pace is above zero", o.StepsPerMinute)
	case o.StepsPerMinute > 0 && steps == 0:
		return nil, fmt.Errorf("%s: the runs took no steps, so no pace can be set for them: leave out the steps a minute", set.Dir)
	case o.StepsPerMinute > 0:
		// Every run slowed (or sped) alike keeps the runs' shape, long
		// and short, while their steps come at the given pace.
		stretch, spm = measured/o.StepsPerMinute, o.StepsPerMinute
	}
	m := &Runs{
		Dir: set.Dir, Runs: len(set.Runs), Skipped: set.Skipped, Percentile: Percentile,
		MeasuredStepsPerMinute: measured, Retimed: o.StepsPerMinute > 0,
	}
	p := &Plan{FlatMaxTokens: flat, StepsPerMinute: spm, Mix: "runs", Budget: b, Runs: m}

	var tokens, flats, calls, firsts, flatFirsts []float64
	byType := map[string]*Charge{}
	var order []string
	for _, r := range set.Runs {
		minutes := float64(r.ElapsedMS) / 60000 * stretch
		var t, f int64
		for _, c := range r.Calls {
			t += c.TokensReserved
			f += c.flatCharge(flat)
			ch := byType[c.Type]
			if ch == nil {
				ch = &Charge{Type: c.Type}
				byType[c.Type] = ch
				order = append(order, c.Type)
			}
			ch.Calls++
			ch.MaxTokens += float64(c.MaxTokens)
			ch.N += float64(c.n())
			ch.PromptTokens += float64(c.TokensReserved - c.MaxTokens*c.n())
			ch.Charged += float64(c.TokensReserved)
			ch.FlatCharged += float64(c.flatCharge(flat))
		}
		rate := Rate{
			File: r.File, Steps: r.Steps, Calls: len(r.Calls), Minutes: minutes, Tokens: t,
			TokensPerMinute:     float64(t) / minutes,
			FlatTokensPerMinute: float64(f) / minutes,
			CallsPerMinute:      float64(len(r.Calls)) / minutes,
		}
		m.PerRun = append(m.PerRun, rate)
		tokens = append(tokens, rate.TokensPerMinute)
		flats = append(flats, rate.FlatTokensPerMinute)
		calls = append(calls, rate.CallsPerMinute)
		firsts = append(firsts, float64(r.Calls[0].TokensReserved))
		flatFirsts = append(flatFirsts, float64(r.Calls[0].flatCharge(flat)))
	}
	for _, name := range order {
		c := byType[name]
		k := float64(c.Calls)
		c.MaxTokens, c.N, c.PromptTokens, c.Charged, c.FlatCharged = c.MaxTokens/k, c.N/k, c.PromptTokens/k, c.Charged/k, c.FlatCharged/k
		if steps > 0 {
			c.CallsPerStep = k / float64(steps)
		}
		p.PerType = append(p.PerType, *c)
	}
	m.TokensPerMinute = Stat{percentile(tokens, Percentile), mean(tokens)}
	m.FlatTokensPerMinute = Stat{percentile(flats, Percentile), mean(flats)}
	m.CallsPerMinute = Stat{percentile(calls, Percentile), mean(calls)}
	if !m.Retimed {
		var ms, n float64
		for _, r := range set.Runs {
			for _, c := range r.Calls {
				ms += float64(c.LatencyMS)
				n++
			}
		}
		if ms/n < fastCallMS {
			p.Notes = append(p.Notes, fmt.Sprintf("the runs' calls were answered in %.0f ms on average, as a simulator or a cassette answers, not a deployed model: their pace of %.1f steps a minute is not a fleet's; retime them to the pace of agents on the real model (--steps-per-minute)", ms/n, measured))
		}
	}
	if len(set.Runs) < 100 {
		p.Notes = append(p.Notes, fmt.Sprintf("of %d runs the p99 is the worst run's; more runs make it a truer tail", len(set.Runs)))
	}
	// The first calls of agents started together all land in the same
	// seconds: their average is what a burst of starts spends.
	tuned := Demand{TokensPerMinute: m.TokensPerMinute.P99, CallsPerMinute: m.CallsPerMinute.P99, FirstCall: mean(firsts)}
	flatD := Demand{TokensPerMinute: m.FlatTokensPerMinute.P99, CallsPerMinute: m.CallsPerMinute.P99, FirstCall: mean(flatFirsts)}
	if err := p.size(tuned, flatD); err != nil {
		return p, err
	}
	if len(replayed) > 0 {
		m.Replayed, m.HitRate = len(replayed), float64(len(replayed))/float64(len(whole.Runs))
		s, err := Size(b, atHitRate(tuned, asked, replayed, m.HitRate, stretch))
		if err != nil {
			return p, err
		}
		p.AtHitRate = &s
		ta, tr := meanTokens(asked), meanTokens(replayed)
		m.TasksPerHour = 60 * b.TokensPerMinute() / ta
		m.TasksPerHourLearned = 60 * b.TokensPerMinute() / ((1-m.HitRate)*ta + m.HitRate*tr)
	}
	return p, nil
}

// meanTokens is what a run reserves on average.
func meanTokens(runs []Run) float64 {
	var t float64
	for _, r := range runs {
		for _, c := range r.Calls {
			t += float64(c.TokensReserved)
		}
	}
	return t / float64(len(runs))
}

// splitRuns parts the runs the model worked from those replayed.
func splitRuns(runs []Run) (asked, replayed []Run) {
	for _, r := range runs {
		if r.Replayed {
			replayed = append(replayed, r)
		} else {
			asked = append(asked, r)
		}
	}
	return asked, replayed
}

// atHitRate is an agent's demand when a share h of its runs replay: the
// tokens and calls of a run of each kind, weighted by h, over the minutes
// a run of each kind takes, scaled by the model runs' p99 over their mean
// so that the tail stays planned for. A replay is short: the agent starts
// its next task sooner, and its model runs set its pace.
func atHitRate(tuned Demand, asked, replayed []Run, h, stretch float64) Demand {
	per := func(runs []Run) (tokens, calls, minutes float64) {
		for _, r := range runs {
			for _, c := range r.Calls {
				tokens += float64(c.TokensReserved)
			}
			calls += float64(len(r.Calls))
			minutes += float64(r.ElapsedMS) / 60000 * stretch
		}
		k := float64(len(runs))
		return tokens / k, calls / k, minutes / k
	}
	ta, ca, ma := per(asked)
	tr, cr, mr := per(replayed)
	minutes := (1-h)*ma + h*mr
	tail := tuned.TokensPerMinute / (ta / ma)
	callTail := tuned.CallsPerMinute / (ca / ma)
	return Demand{
		TokensPerMinute: ((1-h)*ta + h*tr) / minutes * tail,
		CallsPerMinute:  ((1-h)*ca + h*cr) / minutes * callTail,
		FirstCall:       tuned.FirstCall,
	}
}
