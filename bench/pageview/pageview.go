// Package pageview measures the page a model reads, side by side: the
// JSON page prompts carried before (legacy.go) and each call type's view
// of today, on every page of testdata/pages and every step of every task
// in testdata/tasks, all replayed offline. Per page and call type it
// counts characters, Azure's admission estimate, o200k tokens, the
// elements and the words shown of all; per step of a task (its pick and
// its check), the tokens the calls reserve with each.
package pageview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/browser/replay"
	"github.com/headroom-agent/headroom/budget/models"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/yamlconf"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/embedded"
	"github.com/headroom-agent/headroom/llm/tokens"
)

// Options say where the pages and tasks are.
type Options struct {
	Pages string // the sites' recordings and steps: testdata/pages
	Tasks string // task files with their recordings: testdata/tasks
	// Browser shapes the browsers opened (a Chrome path, no sandbox).
	Browser browser.Options
	// Progress, when set, gets a line per page and task measured.
	Progress func(format string, args ...any)
}

// Shown is what one rendering of a page shows, and what it costs.
type Shown struct {
	Chars     int   `json:"chars"`
	Estimate  int64 `json:"estimate"` // Azure's admission estimate of the page: a token per four characters
	Tokens    int   `json:"tokens"`   // o200k
	Elements  int   `json:"elements"` // of the snapshot's, shown
	TextChars int   `json:"text_chars"`
}

// PageRow is one page as one call type's calls read it, both ways.
type PageRow struct {
	Page        string `json:"page"`
	Type        string `json:"type"`
	ElementsAll int    `json:"elements_all"`
	TextAll     int    `json:"text_chars_all"` // the page's own words, outside its elements
	Today       Shown  `json:"today"`
	View        Shown  `json:"view"`
}

// VisionRow is what the page's screenshot adds to a pick, at detail low
// and high, beside the text view it goes with: the image tokens by each
// model family's rule (budget/models), and the bytes sent.
type VisionRow struct {
	Page     string `json:"page"`
	TextView int64  `json:"text_view"` // the pick's page, Azure's estimate
	Step     int64  `json:"step"`      // the pick as it reserves: system, sections, page and cap
	Low      Image  `json:"low"`
	High     Image  `json:"high"`
	// Mini and O4Mini are the high image on gpt-4.1-mini and o4-mini,
	// which count 32-px patches rather than 512-px tiles.
	Mini   int64 `json:"gpt_4_1_mini"`
	O4Mini int64 `json:"o4_mini"`
}

// Image is one screenshot as a call would carry it.
type Image struct {
	Width  int   `json:"width"`
	Height int   `json:"height"`
	Bytes  int   `json:"bytes"`
	Tokens int64 `json:"tokens"` // on gpt-4o
	Masked int   `json:"masked"`
}

// StepRow is what one step of a task reserves: its pick and, when it
// made one, its check.
type StepRow struct {
	Task   string `json:"task"`
	Step   int    `json:"step"`
	Action string `json:"action"`
	Today  int64  `json:"today"`
	View   int64  `json:"view"`
}

// TaskRow sums a task's steps, and gives its plan and its answer apart.
type TaskRow struct {
	Task   string       `json:"task"`
	Status agent.Status `json:"status"`
	Steps  int          `json:"steps"`
	Today  int64        `json:"today"`
	View   int64        `json:"view"`
	Plan   [2]int64     `json:"plan"`   // today, view
	Answer [2]int64     `json:"answer"` // today, view
}

// Report is the benchmark's rows and totals.
type Report struct {
	Pages  []PageRow   `json:"pages"`
	Vision []VisionRow `json:"vision"`
	Steps  []StepRow   `json:"steps"`
	Tasks  []TaskRow   `json:"tasks"`
	Today  int64       `json:"today"` // over every step of every task
	View   int64       `json:"view"`
}

// Ratio is the view's step tokens over today's.
func (r Report) Ratio() float64 {
	if r.Today == 0 {
		return 0
	}
	return float64(r.View) / float64(r.Today)
}

// Measure renders every page and replays every task.
func Measure(ctx context.Context, o Options) (Report, error) {
	var r Report
	types := calltypes.Default()
	if err := measurePages(ctx, o, types, &r); err != nil {
		return r, err
	}
	if err := measureTasks(ctx, o, types, &r); err != nil {
		return r, err
	}
	for _, t := range r.Tasks {
		r.Today += t.Today
		r.View += t.View
	}
	return r, nil
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// measurePages walks each site's steps on its recording and renders the
// page after each, every type's way.
func measurePages(ctx context.Context, o Options, types *calltypes.Registry, r *Report) error {
	files, err := filepath.Glob(filepath.Join(o.Pages, "*.steps.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no pages: no *.steps.yaml in %s", o.Pages)
	}
	slices.Sort(files)
	for _, f := range files {
		site := strings.TrimSuffix(filepath.Base(f), ".steps.yaml")
		steps, err := browser.LoadSteps(f)
		if err != nil {
			return err
		}
		p, start, err := replayed(ctx, o.Browser, filepath.Join(o.Pages, site+".har"), "")
		if err != nil {
			return err
		}
		snaps, shots, err := walkSite(ctx, p, start, steps)
		err = errors.Join(err, p.Close())
		if err != nil {
			return fmt.Errorf("%s: %w", site, err)
		}
		for k, s := range snaps {
			name := site
			if k > 0 {
				name = fmt.Sprintf("%s+%d", site, k)
			}
			for _, t := range types.Types() {
				r.Pages = append(r.Pages, pageRow(name, t, s))
			}
			r.Vision = append(r.Vision, visionRow(name, types, s, shots[k]))
			o.progress("page %s: %d elements", name, len(s.Elements))
		}
	}
	return nil
}

// walkSite observes the page after each step that changes it, and
// takes its screenshots at detail low and high while it is there.
func walkSite(ctx context.Context, p *browser.Page, start string, steps []browser.Step) ([]*browser.Snapshot, [][2]browser.Shot, error) {
	if _, err := p.Navigate(ctx, start); err != nil {
		return nil, nil, err
	}
	var snaps []*browser.Snapshot
	var shots [][2]browser.Shot
	keep := func(s *browser.Snapshot) error {
		sh, err := pickShots(ctx, s)
		snaps, shots = append(snaps, s), append(shots, sh)
		return err
	}
	s, err := p.Observe(ctx)
	if err == nil {
		err = keep(s)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, st := range steps {
		a := st.Action(os.TempDir())
		if _, err := p.Do(ctx, a); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", a, err)
		}
		next, err := p.Observe(ctx)
		if err != nil {
			return nil, nil, err
		}
		if next.Fingerprint != s.Fingerprint { // an expect changes nothing
			s = next
			if err := keep(s); err != nil {
				return nil, nil, err
			}
		}
	}
	return snaps, shots, nil
}

// pickShots are the page's screenshots as a pick would carry them at
// detail low and high, by the built-in type's bounds.
func pickShots(ctx context.Context, s *browser.Snapshot) ([2]browser.Shot, error) {
	var out [2]browser.Shot
	for i, side := range []int{calltypes.LowDetailSide, 0} {
		sh, err := s.Screenshot(ctx, browser.ShotOptions{MaxPixels: calltypes.DefaultImagePixels, MaxSide: side})
		if err != nil {
			return out, fmt.Errorf("screenshot: %w", err)
		}
		out[i] = sh
	}
	return out, nil
}

// visionRow prices the page's screenshots beside the pick's text view.
func visionRow(name string, types *calltypes.Registry, s *browser.Snapshot, shots [2]browser.Shot) VisionRow {
	t, _ := types.Lookup(calltypes.ClickPick)
	view := agent.ViewOf(t, s, nil, -1)
	in := calltypes.PickInput{Goal: "Reach the goal.", Page: view}
	raw, _ := json.Marshal(in)
	msgs := []tokens.Message{{Role: "system", Content: t.System}, {Role: "user", Content: t.Message(raw)}}
	image := func(sh browser.Shot, detail string) Image {
		return Image{Width: sh.Width, Height: sh.Height, Bytes: len(sh.Data), Masked: sh.Masked,
			Tokens: models.ImageTokens("gpt-4o", sh.Width, sh.Height, detail)}
	}
	high := shots[1]
	return VisionRow{
		Page: name, TextView: int64(utf8.RuneCountInString(view.Render())+3) / 4, Step: llm.Estimate(msgs, t.MaxTokens, 1),
		Low: image(shots[0], calltypes.DetailLow), High: image(high, calltypes.DetailHigh),
		Mini:   models.ImageTokens("gpt-4.1-mini", high.Width, high.Height, calltypes.DetailHigh),
		O4Mini: models.ImageTokens("o4-mini", high.Width, high.Height, calltypes.DetailHigh),
	}
}

// pageRow renders s as calls of t read it, today and in the view.
func pageRow(name string, t calltypes.Type, s *browser.Snapshot) PageRow {
	row := PageRow{Page: name, Type: t.Name, ElementsAll: len(s.Elements), TextAll: textAll(s)}
	legacy := legacyOf(s, t.Name != calltypes.Summarize)
	row.Today = shown(s, mustJSON(legacy), len(legacy.Elements), legacy.Text)
	view := agent.ViewOf(t, s, nil, -1)
	out := view.Render()
	els := len(view.Elements())
	if els == 0 { // the words view: elements as their names
		for _, e := range s.Elements {
			if e.Name != "" && strings.Contains(out, clip(e.Name, 80)) {
				els++
			}
		}
	}
	row.View = shown(s, out, els, out)
	return row
}

func shown(s *browser.Snapshot, rendered string, elements int, text string) Shown {
	chars := utf8.RuneCountInString(rendered)
	return Shown{Chars: chars, Estimate: int64(chars+3) / 4, Tokens: tokens.Count(rendered), Elements: elements, TextChars: textShown(s, text)}
}

// textAll is the page's own words, outside its elements, in characters.
func textAll(s *browser.Snapshot) int {
	n := 0
	for _, b := range s.Blocks {
		if b.Element < 0 {
			n += utf8.RuneCountInString(b.Text)
		}
	}
	return n
}

// textShown is how much of the page's own words a rendering holds.
func textShown(s *browser.Snapshot, text string) int {
	n := 0
	for _, b := range s.Blocks {
		if b.Element < 0 && strings.Contains(text, b.Text) {
			n += utf8.RuneCountInString(b.Text)
		}
	}
	return n
}

// replayed opens a browser answered from a recording, fenced to the
// start page's host (or to domains), and says where the recording starts.
func replayed(ctx context.Context, bo browser.Options, har string, start string, domains ...string) (*browser.Page, string, error) {
	a, err := replay.Load(har)
	if err != nil {
		return nil, "", err
	}
	if start == "" {
		start = browser.StartURL(a)
	}
	if len(domains) == 0 {
		if u, err := url.Parse(start); err == nil {
			domains = []string{u.Hostname()}
		}
	}
	bo.Replay = replay.NewMatcher(a, replay.Options{Redactor: replay.DefaultRedactor()})
	bo.AllowedDomains = domains
	p, err := browser.Open(ctx, bo)
	return p, start, err
}

// measureTasks runs each task on its recording with the embedded
// default, then walks its steps again and prices each step's calls both
// ways, on the very pages the calls saw.
func measureTasks(ctx context.Context, o Options, types *calltypes.Registry, r *Report) error {
	files, err := filepath.Glob(filepath.Join(o.Tasks, "*.yaml"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	for _, f := range files {
		if isTaskList(f) {
			continue
		}
		t, err := agent.LoadTask(f)
		if err != nil {
			return err
		}
		if t.Replay == "" {
			continue // nothing to replay offline
		}
		bo := o.Browser
		// A task that signs in types its secrets by name, as a run does.
		if bo.Secrets, err = t.BrowserSecrets(); err != nil {
			return err
		}
		// And gives the files it declares by name.
		if bo.Files, err = t.BrowserFiles(); err != nil {
			return err
		}
		res, err := runTask(ctx, bo, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		row, steps, err := priceTask(ctx, bo, types, t, res)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		r.Tasks = append(r.Tasks, row)
		r.Steps = append(r.Steps, steps...)
		o.progress("task %s: %s, %d steps, %d reserved today, %d in the view", t.Name, res.Status, row.Steps, row.Today, row.View)
	}
	return nil
}

// isTaskList reports a file that lists tasks (tasks: at its top level)
// rather than being one.
func isTaskList(path string) bool {
	b, err := yamlconf.ReadFile(path, 1<<20)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "tasks:") {
			return true
		}
	}
	return false
}

func runTask(ctx context.Context, bo browser.Options, t *agent.Task) (_ agent.Result, err error) {
	p, _, err := replayed(ctx, bo, t.Replay, t.StartURL, t.AllowedDomains...)
	if err != nil {
		return agent.Result{}, err
	}
	defer func() { err = errors.Join(err, p.Close()) }()
	caller, err := embedded.Open(ctx, llm.Options{})
	if err != nil {
		return agent.Result{}, err
	}
	defer caller.Close()
	res, _ := agent.Run(ctx, t, agent.Options{Page: p, Caller: caller}) // its status is in res
	return res, nil
}
