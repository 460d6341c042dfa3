// Package top draws the shared budget store the way headroom budget top
// shows it: one block per deployment (how much of its allowance the fleet
// holds, the limit it is held against, the request windows, the breaker,
// the fleet's 429s) under a line about the whole fleet.
//
// Render is a pure function from a budget.Dashboard to lines of text, so
// the same frame goes to a terminal (Run, through tcell) or to stdout as
// plain text (Text). Colour only repeats what the words say: a terminal
// without colours loses nothing.
package top

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/headroom-agent/headroom/budget"
	"github.com/rivo/uniseg"
)

// DefaultWidth is a plain terminal's.
const DefaultWidth = 80

// Tone is what a piece of text means, for a screen to colour.
type Tone uint8

const (
	Plain Tone = iota
	Dim        // labels and the empty part of a bar
	Title
	Good
	Warn
	Bad
)

// Span is text of one tone.
type Span struct {
	Text string
	Tone Tone
}

// Line is one row of the frame.
type Line []Span

// String is the line's text without tones.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// Width is the line's width in terminal cells.
func (l Line) Width() int {
	n := 0
	for _, s := range l {
		n += uniseg.StringWidth(s.Text)
	}
	return n
}

// Options say what frames a Render into.
type Options struct {
	// Name is the config's, for the title.
	Name string
	// Width is the most cells a line may take; 0 means DefaultWidth.
	Width int
	// Height is the most lines; 0 means as many as the dashboard needs.
	// Deployments that do not fit are counted on one line instead.
	Height int
	// Note is shown under the fleet line: that the store is this
	// process's own, or that the last read failed.
	Note string
	// Keys says which keys quit, for the live view.
	Keys bool
	// Window is the store's token window, which the request windows'
	// labels scale with (a compressed minute has a 100 ms "1 s" window);
	// 0 means budget.DefaultWindow.
	Window time.Duration
}

// Text is a frame as plain text, a line each, without trailing blanks.
func Text(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// minBar is the narrowest bar worth drawing beside a name; below it the
// name gets a line of its own.
const minBar = 10

// Render draws d as read at at. A dashboard never read (zero At, no
// deployments) draws the title and the note only. Every line is at most
// o.Width cells.
func Render(d budget.Dashboard, at time.Time, o Options) []Line {
	w := o.Width
	if w <= 0 {
		w = DefaultWidth
	}
	head := []Line{title(o.Name, at, w)}
	if d.At.IsZero() && len(d.Deployments) == 0 {
		if o.Note != "" {
			head = append(head, flow(w, 0, 1, words(o.Note, Warn))...)
		}
		return fit(head, nil, nil, o.Height, w)
	}
	head = append(head, fleet(d, w)...)
	if o.Note != "" {
		head = append(head, flow(w, 0, 1, words(o.Note, Warn))...)
	}
	head = append(head, nil)

	var blocks []block
	c := columns(d.Deployments, w)
	win := o.Window
	if win <= 0 {
		win = budget.DefaultWindow
	}
	for _, v := range d.Deployments {
		blocks = append(blocks, deployment(v, d.Deployments, c, win, w))
	}
	legend := "429s t/r/a/u: the fleet's, by cause (tokens, requests, adjustment, unknown), this token window and the last."
	if o.Keys {
		legend += " q quits."
	}
	foot := append([]Line{nil}, flow(w, 0, 1, words(legend, Dim))...)
	return fit(head, blocks, foot, o.Height, w)
}

// block is one deployment's lines; the first short of them are its gauge,
// all a frame shows of it when space is short.
type block struct {
	lines []Line
	short int
}

// fit stacks the frame within height: the legend goes first, then each
// deployment's details, and deployments that still do not fit are counted
// on one line.
func fit(head []Line, blocks []block, foot []Line, height, w int) []Line {
	size := func(short bool) int {
		n := len(head)
		for _, b := range blocks {
			if short {
				n += b.short
			} else {
				n += len(b.lines)
			}
		}
		return n
	}
	short := false
	if height > 0 && size(false)+len(foot) > height {
		foot = nil
		if size(false) > height {
			short = true
			foot = flow(w, 0, 1, words("Details hidden: a taller terminal shows them.", Dim))
		}
	}
	out := append([]Line(nil), head...)
	for i, b := range blocks {
		ls := b.lines
		if short {
			ls = ls[:b.short]
		}
		room := height - len(out) - len(foot)
		if i < len(blocks)-1 {
			room-- // for the line saying how many more
		}
		if height > 0 && len(ls) > room {
			n := len(blocks) - i
			more := fmt.Sprintf("+%d more deployment%s: a taller terminal shows them", n, plural(n))
			out = append(out, flow(w, 0, 1, words(more, Warn))[0])
			break
		}
		out = append(out, ls...)
	}
	out = append(out, foot...)
	if height > 0 && len(out) > height {
		out = out[:height]
	}
	for i := range out {
		out[i] = clip(out[i], w)
	}
	return out
}

func title(name string, at time.Time, w int) Line {
	left := "headroom budget top"
	var right string
	if !at.IsZero() {
		right = at.Format(time.DateTime)
		if width(left)+2+12+2+width(right) > w {
			right = at.Format(time.TimeOnly)
		}
	}
	l := Line{{left, Title}}
	room := w - width(left) - 2 - width(right) - 2
	if name = printable(name); name != "" && room >= 4 {
		l = append(l, Span{"  " + truncateLeft(name, room), Plain})
	}
	if right != "" {
		if pad := w - l.Width() - width(right); pad >= 1 {
			l = append(l, Span{strings.Repeat(" ", pad) + right, Dim})
		}
	}
	return l
}

func fleet(d budget.Dashboard, w int) []Line {
	agents := Span{"agents: no census", Dim}
	if d.Agents >= 0 {
		agents = Span{fmt.Sprintf("%d agent%s alive", d.Agents, plural(d.Agents)), Plain}
	}
	spread := Span{fmt.Sprintf("spread %.0f pts", d.Spread*100), Plain}
	if d.Spread >= 0.5 {
		spread.Tone = Warn
	}
	n := len(d.Deployments)
	return flow(w, 0, 2, []Span{
		{"fleet:", Title},
		agents,
		{commas(d.ReservedTokens) + " tokens reserved", Plain},
		spread,
		{fmt.Sprintf("%d deployment%s", n, plural(n)), Plain},
	})
}

// cols are the widths the deployments' first lines share, so bars line up.
type cols struct{ name, nums, bar int }

func columns(vs []budget.DeploymentView, w int) cols {
	var c cols
	for _, v := range vs {
		c.name = max(c.name, width(printable(v.Name)))
		c.nums = max(c.nums, width(numbers(v)))
	}
	// A long name gives way to the bar: 3/10 of the width, or 12.
	c.name = max(1, min(c.name, max(12, w*3/10)))
	c.bar = w - c.name - fixedCols - c.nums
	return c
}

// fixedCols is what a first line holds besides the name, the numbers and
// the bar (brackets and all): a gap, a space, the percentage and a gap.
const fixedCols = 2 + 1 + 4 + 2

func numbers(v budget.DeploymentView) string {
	return commas(v.Reserved) + " / " + commas(v.EffectiveTPM)
}

func deployment(v budget.DeploymentView, all []budget.DeploymentView, c cols, win time.Duration, w int) block {
	var out []Line
	name := printable(v.Name)
	gauge := func(barW int) Line {
		tone := fractionTone(v.ReservedFraction)
		pct := fmt.Sprintf("%3.0f%%", v.ReservedFraction*100)
		l := Line{}
		if barW >= 4 {
			l = append(l, bar(v, barW, tone)...)
			l = append(l, Span{" ", Plain})
		}
		l = append(l, Span{pct, tone}, Span{"  " + pad(numbers(v), c.nums), Plain})
		return l
	}
	if c.bar >= minBar {
		l := Line{{pad(truncateMiddle(name, c.name), c.name) + "  ", Title}}
		out = append(out, append(l, gauge(c.bar)...))
	} else {
		// Too narrow for name and bar side by side: the name on its own.
		out = append(out, Line{{truncateMiddle(name, w), Title}})
		l := Line{{"  ", Plain}}
		out = append(out, append(l, gauge(w-2-(fixedCols-2)-c.nums)...))
	}

	limit := []Span{{"TPM " + commas(v.EffectiveTPM), Plain}}
	if v.EffectiveTPM < v.ConfiguredTPM {
		limit = []Span{
			{"TPM " + commas(v.EffectiveTPM) + " ADJUSTED", Warn},
			{"(configured " + commas(v.ConfiguredTPM) + ")", Warn},
		}
	}
	lim := budget.Limits{Requests: v.RPM}
	r1, r10 := lim.PerSecond(), lim.PerTenSeconds()
	reqTone := Plain
	switch {
	case v.Requests1s >= r1 || v.Requests10s >= r10:
		reqTone = Bad
	case float64(v.Requests10s) >= 0.8*float64(r10):
		reqTone = Warn
	}
	fields := append(limit,
		Span{fmt.Sprintf("requests %v %d/%d, %v %d/%d", win/60, v.Requests1s, r1, win/6, v.Requests10s, r10), reqTone},
	)
	if v.BreakerOpen {
		fields = append(fields, Span{"breaker OPEN", Bad})
	} else {
		fields = append(fields, Span{"breaker closed", Plain})
	}
	fields = append(fields, rateLimited(v.FleetRateLimited))
	if n := v.FleetWritesLost; n > 0 {
		// A settle, cancel or breaker the store never got: room held to
		// its window's end, or a breaker the fleet did not hear of.
		fields = append(fields, Span{fmt.Sprintf("%d budget write%s lost (fleet, last %v h)", n, plural(int(n)), budget.LostWritesKept.Hours()), Bad})
	}
	if p := v.FleetPrompt; p.Prompt > 0 {
		fields = append(fields, Span{fmt.Sprintf("prompt cache %.0f%% of %s tokens (fleet, last %v h)", 100*p.CachedShare(), commas(p.Prompt), budget.PromptKept.Hours()), Dim})
	}
	if m := v.Model; m != nil {
		fields = append(fields, model(m))
	}
	if shared := sharers(v, all); len(shared) > 0 {
		fields = append(fields, Span{"one quota with " + strings.Join(shared, ", "), Dim})
	}
	return block{append(out, flow(w, 2, 2, fields)...), len(out)}
}

// model shows what the fleet learned: the estimate ratio (Azure's charge
// over ours), the share of the limit reservations may use, and the
// pacing allowance.
func model(m *budget.ModelView) Span {
	ratio := "ratio not learned"
	if m.Learned {
		ratio = fmt.Sprintf("ratio %.3f", m.Ratio)
	}
	return Span{fmt.Sprintf("model: %s, margin %.0f%%, pacing +%v", ratio, 100*m.Margin, m.Pacing.Round(time.Millisecond)), Dim}
}

func bar(v budget.DeploymentView, n int, tone Tone) Line {
	inner := n - 2
	full := int(v.ReservedFraction*float64(inner) + 0.5)
	if v.Reserved > 0 && full == 0 {
		full = 1 // a little held still shows
	}
	full = max(0, min(full, inner))
	return Line{
		{"[", Plain},
		{strings.Repeat("#", full), tone},
		{strings.Repeat(".", inner-full), Dim},
		{"]", Plain},
	}
}

func fractionTone(f float64) Tone {
	switch {
	case f >= 0.8:
		return Bad
	case f >= 0.5:
		return Warn
	}
	return Good
}

func rateLimited(m map[budget.Cause]int64) Span {
	if m == nil {
		return Span{"429s: no census", Dim}
	}
	t, r, a, u := m[budget.CauseTokens], m[budget.CauseRequests], m[budget.CauseAdjustment], m[budget.CauseUnknown]
	s := Span{fmt.Sprintf("429s t/r/a/u %d/%d/%d/%d", t, r, a, u), Plain}
	if t+r+a+u > 0 {
		s.Tone = Bad
	}
	return s
}

// sharers are the other deployments counted under v's quota: their
// numbers are v's.
func sharers(v budget.DeploymentView, all []budget.DeploymentView) []string {
	var out []string
	for _, o := range all {
		if o.Quota == v.Quota && o.Name != v.Name {
			out = append(out, printable(o.Name))
		}
	}
	return out
}

// flow lays fields out on lines of at most w cells, indent cells in,
// gap cells apart, starting a new line where the next field would not fit.
func flow(w, indent, gap int, fields []Span) []Line {
	var out []Line
	var cur Line
	used := 0
	for _, f := range fields {
		fw := width(f.Text)
		if cur != nil && used+gap+fw > w {
			out = append(out, cur)
			cur = nil
		}
		if cur == nil {
			cur = Line{{strings.Repeat(" ", indent), Plain}, f}
			used = indent + fw
			continue
		}
		cur = append(cur, Span{strings.Repeat(" ", gap), Plain}, f)
		used += gap + fw
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

func words(s string, t Tone) []Span {
	var out []Span
	for _, w := range strings.Fields(printable(s)) {
		out = append(out, Span{w, t})
	}
	return out
}

// clip cuts a line to w cells; flow keeps lines within w but for a field
// wider than a whole line.
func clip(l Line, w int) Line {
	if l.Width() <= w {
		return l
	}
	var out Line
	used := 0
	for _, s := range l {
		sw := width(s.Text)
		if used+sw <= w {
			out = append(out, s)
			used += sw
			continue
		}
		if room := w - used; room > 0 {
			out = append(out, Span{truncate(s.Text, room), s.Tone})
		}
		break
	}
	return out
}

// truncate cuts s to w cells, marking the cut with a final ~.
func truncate(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	state := -1
	for s != "" {
		var g string
		var gw int
		g, s, gw, state = uniseg.FirstGraphemeClusterInString(s, state)
		if used+gw > w-1 {
			break
		}
		b.WriteString(g)
		used += gw
	}
	return b.String() + "~"
}

// truncateLeft cuts s to w cells from the left: of a file's path, the
// end says most.
func truncateLeft(s string, w int) string {
	if width(s) <= w {
		return s
	}
	gs := graphemes(s)
	return "~" + strings.Join(gs[len(gs)-tail(gs, w-1):], "")
}

// truncateMiddle cuts s to w cells in the middle: deployments of one fleet
// tend to share a prefix (gpt4o-) and a suffix (-prod) and differ in
// between or at the end, so both ends stay.
func truncateMiddle(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if w < 5 {
		return truncate(s, w)
	}
	gs := graphemes(s)
	back := tail(gs, (w-1)/2)
	return truncate(strings.Join(gs[:len(gs)-back], ""), w-back) + strings.Join(gs[len(gs)-back:], "")
}

func graphemes(s string) []string {
	var gs []string
	state := -1
	for s != "" {
		var g string
		g, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		gs = append(gs, g)
	}
	return gs
}

// tail is how many of the last graphemes fit in w cells.
func tail(gs []string, w int) int {
	used, n := 0, 0
	for n < len(gs) && used+width(gs[len(gs)-1-n]) <= w {
		used += width(gs[len(gs)-1-n])
		n++
	}
	return n
}

func pad(s string, w int) string {
	if n := w - width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

func width(s string) int { return uniseg.StringWidth(s) }

// printable keeps a name from moving the cursor or ringing the bell: a
// config is text a person wrote, not always carefully.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

func commas(n int64) string { return thousands.Sprintf("%d", n) }

// thousands groups digits as the README's figures are: 240,000.
var thousands = message.NewPrinter(language.English)

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
