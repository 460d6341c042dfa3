package browser

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// pages serves each of its pages, by path, as HTML.
func pages(t *testing.T, byPath map[string]string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for path, body := range byPath {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func observeAt(t *testing.T, p *Page, u string) *Snapshot {
	t.Helper()
	if _, err := p.Navigate(ctxT(t), u); err != nil {
		t.Fatal(err)
	}
	return observe(t, p)
}

func TestSnapshotVisualAndUnnamed(t *testing.T) {
	t.Parallel()
	icon := `<svg width="16" height="16" viewBox="0 0 16 16"><path d="M2 2L14 14M14 2L2 14" stroke="black"/></svg>`
	s := pages(t, map[string]string{
		"/canvas": `<!doctype html><body style="margin:0"><canvas width="640" height="360" style="display:block;width:640px;height:360px"></canvas><button>Go</button>`,
		"/nested": `<!doctype html><body style="margin:0"><svg width="640" height="360" style="display:block"><svg width="640" height="360"><rect width="640" height="360" fill="teal"/></svg></svg>`,
		"/text":   `<!doctype html><h1>Opening hours</h1><p>Monday to Friday, nine to five.</p><button>Book</button>`,
		"/icons":  `<!doctype html><button>Save</button><button aria-label="Close">` + icon + `</button><button>` + icon + `</button><button class="x-7f">` + icon + `</button><input type="search">`,
	})
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})

	canvas := observeAt(t, p, s.URL+"/canvas")
	vp := canvas.Viewport[1] - canvas.Viewport[0]
	if canvas.Visual <= 0.2 || canvas.Visual > 1 {
		t.Errorf("a 640×360 canvas in a 1280×%.0f viewport: Visual = %.3f, want more than 0.2", vp, canvas.Visual)
	}
	want := 640 * 360 / (1280 * vp)
	if math.Abs(canvas.Visual-want) > 0.01 {
		t.Errorf("canvas Visual = %.3f, want %.3f", canvas.Visual, want)
	}
	if nested := observeAt(t, p, s.URL+"/nested"); math.Abs(nested.Visual-want) > 0.01 {
		t.Errorf("an svg inside an svg of the same size: Visual = %.3f, want %.3f (counted once)", nested.Visual, want)
	}
	if text := observeAt(t, p, s.URL+"/text"); text.Visual != 0 || text.Unnamed != 0 {
		t.Errorf("a page of words: Visual = %v, Unnamed = %d; want 0, 0", text.Visual, text.Unnamed)
	}
	// Unnamed: the bare icon, the icon only its class names, and the
	// search box with no label, placeholder or value. Named: the words
	// and the labelled icon.
	icons := observeAt(t, p, s.URL+"/icons")
	if icons.Unnamed != 3 {
		t.Errorf("Unnamed = %d, want 3 (two icon-only buttons and an empty search box):\n%s", icons.Unnamed, icons)
	}
}

// shotPage is a form with a password field, a paragraph showing a
// secret's value, a paragraph of plain words, a green square, and a
// field whose label (the words above it, which name it) shows the
// secret: what is secret is masked, nothing else.
const shotPage = `<!doctype html><title>Account</title>
<style>body{margin:0;background:#fff;font:32px sans-serif} .at{position:absolute;margin:0}</style>
<label class="at" style="left:40px;top:20px">Password <input id="pw" type="password" style="width:400px;height:48px;font-size:32px;background:#fff"></label>
<p class="at" id="code" style="left:40px;top:160px">Your code is ` + secretValue + `</p>
<p class="at" id="plain" style="left:40px;top:300px">Nothing secret here at all</p>
<div class="at" id="green" style="left:900px;top:100px;width:200px;height:200px;background:#6c6"></div>
<div class="at" style="left:40px;top:400px">Card ` + secretValue + `</div>
<input class="at" id="card" style="left:40px;top:450px;width:300px;height:40px">`

func TestScreenshotMasksSecrets(t *testing.T) {
	t.Parallel()
	s := pages(t, map[string]string{"/account": shotPage})
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Secrets: pwSecret()})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, s.URL+"/account"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Type(ctx, CSS("#pw"), "correct-horse-42", false); err != nil {
		t.Fatal(err)
	}
	snap := observe(t, p)
	shot, err := snap.Screenshot(ctx, ShotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if shot.MIME != "image/jpeg" || shot.Masked < 2 {
		t.Errorf("shot: MIME %q, Masked %d; want image/jpeg and at least 2 (the password and the code)", shot.MIME, shot.Masked)
	}
	img := decodeShot(t, shot)
	scale := float64(shot.Width) / 1280 // CSS pixels to the shot's

	var code, plain, field, label rect
	for _, b := range snap.Blocks {
		switch {
		case strings.Contains(b.Text, "Your code is"):
			code = b.area()
		case strings.Contains(b.Text, "Nothing secret"):
			plain = b.area()
		}
	}
	for _, e := range snap.Elements {
		if e.Type == "password" && len(e.shows) > 0 {
			field = e.shows[0]
		}
		if e.Type == "text" && len(e.shows) > 1 {
			label = e.shows[1]
		}
	}
	if code.empty() || plain.empty() || field.empty() || label.empty() {
		t.Fatalf("the page's lines are not where the test looks for them:\n%s", snap)
	}
	if !strings.Contains(snap.String(), Placeholder("pw")) {
		t.Errorf("the snapshot does not show the code by name:\n%s", snap)
	}
	green := rect{900, 100, 1100, 300}
	for _, c := range []struct {
		what  string
		where rect
		black bool
	}{
		{"the secret's line", code, true},
		{"the password field", field, true},
		{"the words naming a field, which show the secret", label, true},
		{"the plain line", plain, false},
		{"the green square", green, false},
	} {
		lum := luminance(img, c.where, 0, scale)
		if c.black != (lum < 12) {
			t.Errorf("%s: mean luminance %.1f; want black: %v", c.what, lum, c.black)
		}
	}

	// The raw screenshot shows them: what the test reads is where they are.
	raw, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rawImg, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if lum := luminance(rawImg, code, 0, scale); lum < 100 {
		t.Errorf("unmasked, the secret's line has mean luminance %.1f: the test reads the wrong place", lum)
	}
}

// TestScreenshotMasksWhereTheViewportStands scrolls to a secret far down
// the page: its mask is placed by the viewport's offset.
func TestScreenshotMasksWhereTheViewportStands(t *testing.T) {
	t.Parallel()
	s := pages(t, map[string]string{"/long": `<!doctype html><body style="margin:0;font:32px sans-serif;height:4000px">
<p id="code" style="position:absolute;left:40px;top:2000px;margin:0">Your code is ` + secretValue + `</p>
<p id="plain" style="position:absolute;left:40px;top:2100px;margin:0">Nothing secret here at all</p>`})
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Secrets: pwSecret()})
	ctx := ctxT(t)
	if _, err := p.Navigate(ctx, s.URL+"/long"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ScrollTo(ctx, CSS("#code")); err != nil {
		t.Fatal(err)
	}
	snap := observe(t, p)
	top := snap.Viewport[0]
	var code, plain rect
	for _, b := range snap.Blocks {
		switch {
		case strings.Contains(b.Text, "Your code is"):
			code = b.area()
		case strings.Contains(b.Text, "Nothing secret"):
			plain = b.area()
		}
	}
	if top < 1000 || code.empty() || code.y0 < top || code.y1 > snap.Viewport[1] || plain.y1 > snap.Viewport[1] {
		t.Fatalf("the lines are not in the scrolled viewport %v:\n%s", snap.Viewport, snap)
	}
	shot, err := snap.Screenshot(ctx, ShotOptions{MaxSide: 640})
	if err != nil {
		t.Fatal(err)
	}
	img, scale := decodeShot(t, shot), float64(shot.Width)/1280
	if lum := luminance(img, code, top, scale); lum >= 12 || shot.Masked != 1 {
		t.Errorf("scrolled by %.0f: the secret's line has mean luminance %.1f, %d masked; want black, 1", top, lum, shot.Masked)
	}
	if lum := luminance(img, plain, top, scale); lum < 100 {
		t.Errorf("scrolled by %.0f: the plain line has mean luminance %.1f; want it as it is", top, lum)
	}
}

func TestScreenshotFitsItsBounds(t *testing.T) {
	t.Parallel()
	// Without the secret's value: once any page of the process knows it
	// (redact.Secret), every snapshot masks it.
	s := pages(t, map[string]string{"/account": strings.ReplaceAll(shotPage, secretValue, "no-secret-at-all")})
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
	snap := observeAt(t, p, s.URL+"/account")
	ctx := ctxT(t)
	full, err := snap.Screenshot(ctx, ShotOptions{MaxPixels: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if full.Width != 1280 || full.Masked != 1 { // the empty password field
		t.Errorf("within 1,048,576 pixels: %d×%d with %d masked; want the viewport's 1280 wide, unscaled, with the password field masked", full.Width, full.Height, full.Masked)
	}
	t.Logf("%d×%d: %d bytes", full.Width, full.Height, len(full.Data))
	aspect := float64(full.Width) / float64(full.Height)
	for _, o := range []ShotOptions{{MaxPixels: 200_000}, {MaxSide: 500}, {MaxPixels: 100_000, MaxSide: 300}, {MaxPixels: 1 << 30, MaxSide: 4000}} {
		shot, err := snap.Screenshot(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		img := decodeShot(t, shot)
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		switch {
		case w != shot.Width || h != shot.Height:
			t.Errorf("%+v: the image is %d×%d, the shot says %d×%d", o, w, h, shot.Width, shot.Height)
		case o.MaxPixels > 0 && w*h > o.MaxPixels, o.MaxSide > 0 && max(w, h) > o.MaxSide:
			t.Errorf("%+v: %d×%d is out of bounds", o, w, h)
		case w > full.Width || h > full.Height:
			t.Errorf("%+v: %d×%d is larger than the viewport's %d×%d", o, w, h, full.Width, full.Height)
		case math.Abs(float64(w)/float64(h)-aspect) > 2/float64(h):
			t.Errorf("%+v: %d×%d has lost the viewport's shape (%.3f)", o, w, h, aspect)
		}
		t.Logf("%+v: %d×%d, %d bytes", o, w, h, len(shot.Data))
	}
}

func TestScreenshotNeedsAnObservation(t *testing.T) {
	t.Parallel()
	_, err := (&Snapshot{}).Screenshot(ctxT(t), ShotOptions{})
	if !errors.Is(err, ErrNoAction) || !strings.Contains(err.Error(), "Observe") {
		t.Errorf("a zero snapshot: %v; want ErrNoAction saying to observe", err)
	}
	if _, err := (*Snapshot)(nil).Screenshot(ctxT(t), ShotOptions{}); !errors.Is(err, ErrNoAction) {
		t.Errorf("a nil snapshot: %v", err)
	}
	s := pages(t, map[string]string{"/": `<!doctype html><p>hello</p>`})
	p, err := Open(ctxT(t), Options{AllowedDomains: []string{"127.0.0.1"}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	snap := observeAt(t, p, s.URL+"/")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Screenshot(ctxT(t), ShotOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("a closed page's snapshot: %v; want ErrClosed", err)
	}
}

func TestFitAndShrink(t *testing.T) {
	for _, c := range []struct {
		w, h int
		o    ShotOptions
		ww   int
		wh   int
	}{
		{1280, 800, ShotOptions{}, 1280, 800},
		{1280, 800, ShotOptions{MaxPixels: 1 << 20}, 1280, 800}, // never up
		{1280, 800, ShotOptions{MaxSide: 640}, 640, 400},
		{1280, 800, ShotOptions{MaxPixels: 256_000}, 640, 400},
		{800, 1280, ShotOptions{MaxSide: 320}, 200, 320},
		{3, 3000, ShotOptions{MaxPixels: 10}, 1, 10},
	} {
		if w, h := fit(c.w, c.h, c.o); w != c.ww || h != c.wh {
			t.Errorf("fit(%d, %d, %+v) = %d×%d, want %d×%d", c.w, c.h, c.o, w, h, c.ww, c.wh)
		}
	}
	// An area average keeps a flat colour flat, and halves a fine
	// checkerboard to grey.
	src := image.NewRGBA(image.Rect(0, 0, 9, 6))
	for y := range 6 {
		for x := range 9 {
			v := uint8(0)
			if (x+y)%2 == 0 {
				v = 255
			}
			i := src.PixOffset(x, y)
			copy(src.Pix[i:], []uint8{v, v, v, 255})
		}
	}
	dst := shrink(src, 3, 2)
	for i := 0; i < len(dst.Pix); i += 4 {
		if g := dst.Pix[i]; g < 110 || g > 145 || dst.Pix[i+3] != 255 {
			t.Fatalf("shrunk checkerboard pixel %d = %v, want grey and opaque", i/4, dst.Pix[i:i+4])
		}
	}
}

func decodeShot(t *testing.T, s Shot) image.Image {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(s.Data))
	if err != nil {
		t.Fatalf("the shot is no JPEG: %v", err)
	}
	return img
}

// luminance is the mean luma of the region r (CSS pixels of the page,
// scrolled down by top) in img, whose pixels are scale per CSS pixel, a
// pixel in from each edge.
func luminance(img image.Image, r rect, top, scale float64) float64 {
	r.y0, r.y1 = r.y0-top, r.y1-top
	x0, y0 := int(math.Ceil(r.x0*scale))+1, int(math.Ceil(r.y0*scale))+1
	x1, y1 := int(r.x1*scale)-1, int(r.y1*scale)-1
	var sum float64
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			sum += (0.299*float64(cr) + 0.587*float64(cg) + 0.114*float64(cb)) / 257
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
