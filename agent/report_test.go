package agent

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/internal/chrometest"
	"github.com/headroom-agent/headroom/llm"
)

// go test ./agent -run TestReportRenders -args -report-png ../docs/report.png
// keeps the rendered page's screenshot for the README.
var reportPNG = flag.String("report-png", "", "write TestReportRenders' screenshot of the report to this file")

// sampleResult is a run as the agent writes one, with hostile page text
// in it; its second step's screenshot is written into dir.
func sampleResult(t *testing.T, dir string) *Result {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 320; x++ {
			c := color.RGBA{0xf6, 0xf8, 0xfa, 0xff}
			switch {
			case y < 28:
				c = color.RGBA{0x24, 0x29, 0x2f, 0xff}
			case x > 24 && x < 200 && y > 50 && y < 64:
				c = color.RGBA{0x57, 0x60, 0x6a, 0xff}
			case x > 24 && x < 110 && y > 90 && y < 118:
				c = color.RGBA{0x09, 0x69, 0xda, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "step-002-click.png"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	call := func(typ string, max, prompt, reserved, used, ms int64, retries, limited int) llm.Report {
		return llm.Report{Type: typ, Deployment: "gpt-4o-mini-eu", MaxTokens: max, N: 1, PromptTokens: prompt,
			TokensReserved: reserved, TokensUsed: used, LatencyMS: ms, Retries: retries, RateLimited: limited}
	}
	return &Result{
		Task:   "cheapest-desk",
		Status: Succeeded,
		Reason: "the page shows the success text “EUR” at /shop/item/7",
		Answer: "The cheapest desk is the Oak Writing Desk at EUR 149.00.",
		Plan:   []string{"search the shop for desks", "sort the results by price", "open the cheapest and read its price"},
		Steps: []Step{
			{N: 1, Action: `type "#q" "desk" and submit`, Target: `searchbox "Search the shop"`, Outcome: "navigated",
				URL: "http://127.0.0.1:8391/shop/search?q=desk", Scripted: true, ElapsedMS: 912, AgentMS: 912},
			{N: 2, Action: "click [14]", Target: `link "Oak Writing Desk"`, Outcome: "navigated <script>alert(1)</script>",
				URL: "http://127.0.0.1:8391/shop/item/7", Why: "it is the cheapest at EUR 149.00 <img src=x onerror=alert(2)>",
				Verdict: "yes: the item page shows its price", Screenshot: "step-002-click.png",
				Calls:     []llm.Report{call("pick_action", 300, 2180, 4020, 61, 1432, 1, 1), call("verify_step", 80, 1311, 2650, 9, 388, 0, 0)},
				ElapsedMS: 2611, AgentMS: 791},
			{N: 3, Action: "scroll down", Outcome: "changed", URL: "http://127.0.0.1:8391/shop/item/7",
				Why: "to read the delivery terms", Screenshot: "missing.png",
				Calls:     []llm.Report{call("pick_action", 600, 2290, 4890, 44, 1207, 1, 0)},
				ElapsedMS: 1530, AgentMS: 323},
		},
		Calls: []llm.Report{call("plan", 500, 1840, 3880, 212, 2044, 0, 0), call("summarize", 400, 2730, 4720, 38, 955, 0, 0)},
		Totals: Totals{Steps: 3, Calls: 5, PromptTokens: 10351, TokensReserved: 20160, TokensUsed: 364,
			ModelMS: 6026, ElapsedMS: 9884, Retries: 2, RateLimited: 1, TokenBudget: 60000},
	}
}

func writeSample(t *testing.T) (string, *Result) {
	t.Helper()
	dir := t.TempDir()
	r := sampleResult(t, dir)
	var b bytes.Buffer
	if err := WriteReport(&b, r, dir); err != nil {
		t.Fatal(err)
	}
	return b.String(), r
}

// The page is escaped throughout, carries its screenshot inline and
// every call's cap, and loads nothing from anywhere.
func TestReportIsSelfContainedAndEscaped(t *testing.T) {
	out, r := writeSample(t)
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Error("the report has a <script tag")
	}
	if strings.Contains(out, "<img src=x") {
		t.Error("the report has the step's raw <img> tag")
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		"data:image/png;base64,iVBORw0KGgo",
		"cheapest-desk",
		"succeeded",
		"The cheapest desk is the Oak Writing Desk at EUR 149.00.",
		"20,160", "60,000", "10,351", // thousands separators
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := strings.Count(out, "data:image/png;base64,"); n != 1 {
		t.Errorf("%d embedded screenshots, want 1 (step 3's file is missing)", n)
	}
	calls := append([]llm.Report{}, r.Calls...)
	for _, s := range r.Steps {
		calls = append(calls, s.Calls...)
	}
	for _, c := range calls {
		if !strings.Contains(out, "<td>"+num(c.MaxTokens)+"</td>") {
			t.Errorf("the report lacks %s's max_tokens %d", c.Type, c.MaxTokens)
		}
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`).FindString(out); m != "" {
		t.Errorf("the report loads %q from elsewhere", m)
	}
	if m := regexp.MustCompile(`(?i)url\(|@import`).FindString(out); m != "" {
		t.Errorf("the style loads %q", m)
	}
}

// A screenshot name that climbs out of the output directory is not read.
func TestReportScreenshotStaysInDir(t *testing.T) {
	dir := t.TempDir()
	r := sampleResult(t, dir)
	sub := filepath.Join(dir, "run")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r.Steps[1].Screenshot = "../step-002-click.png"
	var b bytes.Buffer
	if err := WriteReport(&b, r, sub); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "data:image/png") {
		t.Error("a screenshot outside the directory was embedded")
	}
}

func TestReportNumbers(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 20160: "20,160", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := num(in); got != want {
			t.Errorf("num(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{850: "850 ms", 9884: "9.9 s", 125000: "2 min 05 s"} {
		if got := dur(in); got != want {
			t.Errorf("dur(%d) = %q, want %q", in, got, want)
		}
	}
}

// The page renders in Chromium: it draws something and reads as the run.
func TestReportRenders(t *testing.T) {
	out, r := writeSample(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Tall enough to show the whole sample page in one screenshot.
	p := chrometest.Open(t, ctx, browser.Options{Width: 1100, Height: 2000, Logf: t.Logf, AllowSchemes: []string{"file"}})
	if _, err := p.Navigate(ctx, "file://"+filepath.ToSlash(file)); err != nil {
		t.Fatal(err)
	}
	text, err := p.ExtractPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{r.Task, r.Answer, "<script>alert(1)</script>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	shot, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	inked := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			if r, g, b, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || b < 0xf000 {
				inked++
			}
		}
	}
	if inked < 500 {
		t.Errorf("the page looks blank: %d sampled pixels are not white", inked)
	}
	if *reportPNG != "" {
		if err := os.WriteFile(*reportPNG, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The run's totals count the answers the parser refused once each, by
// what came of them: a repaired answer that was also mended is repaired.
func TestTotalsCountRefusedAnswers(t *testing.T) {
	r := &runner{t: &Task{}}
	r.res.Calls = []llm.Report{{Type: "plan"}, {Type: "summarize", Mends: []string{"a slip"}}}
	r.res.Steps = []Step{
		{Calls: []llm.Report{{Type: "click-pick", Repaired: true, Mends: []string{"a slip"}}, {Type: "yes-no"}}},
		{Calls: []llm.Report{{Type: "click-pick", Retries: 1, Invalid: true}}},
	}
	r.total()
	if got := r.res.Totals; got.Calls != 5 || got.Mended != 1 || got.Repaired != 1 || got.Invalid != 1 || got.Retries != 1 {
		t.Errorf("totals %+v: want 5 calls, 1 mended, 1 repaired, 1 invalid, 1 retry", got)
	}
}

// The report lists the run's downloads, linking those saved in the
// output folder and saying why the others were not.
func TestReportListsDownloads(t *testing.T) {
	dir := t.TempDir()
	r := sampleResult(t, dir)
	r.Downloads = []browser.Download{
		{Name: "orders report.csv", Bytes: 1204, Saved: true},
		{Name: "<b>big</b>.zip", Detail: "larger than the bound of 52428800 bytes"},
	}
	var b bytes.Buffer
	if err := WriteReport(&b, r, dir); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<a href="downloads/orders%20report.csv">orders report.csv</a> · 1,204 bytes`,
		`&lt;b&gt;big&lt;/b&gt;.zip: not saved, larger than the bound of 52428800 bytes`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
