package agent

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/llm"
)

// WriteReport writes report.html: one self-contained page showing a run,
// its header, totals, every step with its screenshot and calls, and the
// calls outside steps. Screenshots are read from dir and embedded, so the
// page loads nothing and can be mailed or archived alone. A screenshot
// that is missing or not a PNG is left out, not an error.
func WriteReport(w io.Writer, r *Result, dir string) error {
	if r == nil {
		return errors.New("report: no result")
	}
	v := reportView{R: r, StatusClass: statusClass(r.Status)}
	t := r.Totals
	if t.TokenBudget > 0 {
		v.ReservedPct = pct(t.TokensReserved, t.TokenBudget)
		v.UsedPct = pct(t.TokensUsed, t.TokenBudget)
		v.OverBudget = t.TokensReserved > t.TokenBudget
	} else if t.TokensReserved > 0 {
		v.ReservedPct = 100
		v.UsedPct = pct(t.TokensUsed, t.TokensReserved)
	}
	v.ModelPct = pct(t.ModelMS, t.ElapsedMS)
	for i := range r.Steps {
		s := &r.Steps[i]
		v.Steps = append(v.Steps, stepView{Step: s, Shot: screenshotURI(dir, s.Screenshot)})
	}
	// Render into a buffer so a template error never leaves half a page.
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

type reportView struct {
	R           *Result
	StatusClass string
	Steps       []stepView
	// The bars' widths, in percent: against the token budget when the
	// task set one, else used against reserved.
	ReservedPct, UsedPct float64
	OverBudget           bool
	ModelPct             float64
}

type stepView struct {
	*Step
	Shot template.URL // a data: URI, or empty
}

func statusClass(s Status) string {
	switch s {
	case Succeeded:
		return "ok"
	case Stuck, BudgetExhausted, DeadlineHit:
		return "warn"
	case Failed, Errored:
		return "bad"
	case Shed:
		return "shed"
	}
	return "other"
}

// pct is part of whole in percent, kept within 0..100 so a bar never
// spills out of its track.
func pct(part, whole int64) float64 {
	if whole <= 0 || part <= 0 {
		return 0
	}
	p := float64(part) * 100 / float64(whole)
	if p > 100 {
		p = 100
	}
	return float64(int(p*10)) / 10
}

// maxScreenshot bounds a screenshot the report embeds: a viewport's PNG
// is a few hundred kilobytes.
const maxScreenshot = 32 << 20

// screenshotURI embeds a step's screenshot. The name comes from a result
// file, so it must stay inside dir; and only a PNG is trusted as one.
func screenshotURI(dir, name string) template.URL {
	if name == "" || !filepath.IsLocal(name) {
		return ""
	}
	b, err := safefile.ReadFile(filepath.Join(dir, name), maxScreenshot, "a PNG screenshot")
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		return ""
	}
	// Safe to mark as a URL: the content is base64 of bytes checked to
	// be a PNG, under a fixed image type.
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
}

// num writes an integer with thousands separators.
func num(v any) string {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		return fmt.Sprint(v)
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// dur writes milliseconds as a person reads a duration.
func dur(ms int64) string {
	switch {
	case ms < 1000:
		return num(ms) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	}
	s := ms / 1000
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}

// callsTotal adds calls up (its N is the choices asked for, in all).
func callsTotal(cs []llm.Report) llm.Report {
	var t llm.Report
	for _, c := range cs {
		t.N += c.N
		t.PromptTokens += c.PromptTokens
		t.CachedTokens += c.CachedTokens
		t.Images += c.Images
		t.ImageTokens += c.ImageTokens
		t.TokensReserved += c.TokensReserved
		t.TokensUsed += c.TokensUsed
		t.LatencyMS += c.LatencyMS
		t.Retries += c.Retries
		t.RateLimited += c.RateLimited
		t.StoreWritesFailed += c.StoreWritesFailed
	}
	return t
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":   num,
	"dur":   dur,
	"total": callsTotal,
	"label": func(s Status) string { return strings.ReplaceAll(string(s), "_", " ") },
}).Parse(reportHTML))
