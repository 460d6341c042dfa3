package browser

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/safefile"
)

// DefaultMaxDownloadBytes bounds one download when Options.MaxDownloadBytes
// is zero: a page cannot fill the run's disk.
const DefaultMaxDownloadBytes = 50 << 20

// Download is a file the page had the browser save, or tried to.
type Download struct {
	URL string `json:"url"`
	// Name is the file's name in Options.DownloadDir: the page's
	// suggestion made safe (no folders, no control characters), and
	// made unique beside the files already there.
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	// Saved is set once the whole file is on disk; Detail says why not
	// otherwise (refused, larger than the bound, failed).
	Saved  bool   `json:"saved"`
	Detail string `json:"detail,omitempty"`
	// Text is the beginning of what a saved file says: a text file's
	// (CSV, plain text, JSON, ...) or a PDF's words, row by row; its
	// secrets redacted, for the page's view to show; empty for any other
	// file. The file itself holds it all.
	Text string `json:"-"`

	guid    string
	keeping bool // whole, and being named and read
	done    bool
	shown   bool // a snapshot has told of it
}

// String says what became of it, for an action's outcome.
func (d Download) String() string {
	if d.Saved {
		return fmt.Sprintf("downloaded %s (%d bytes)", strconv.Quote(d.Name), d.Bytes)
	}
	return fmt.Sprintf("the download of %s was not saved: %s", strconv.Quote(d.Name), d.Detail)
}

// allowDownloads sets where the tab's downloads go: into DownloadDir,
// or a folder of the Page's own (Close removes it) when that is empty,
// each under its download's own id until it is whole (then renamed). A
// browser attached on another machine would write them there: its
// downloads are refused. Events are on either way, so a refused
// download is told of too.
func (p *Page) allowDownloads(ctx context.Context) error {
	params := cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny, EventsEnabled: new(true)}
	if c := chromedp.FromContext(ctx); c != nil {
		params.BrowserContextID = c.BrowserContextID
	}
	if p.opts.Remote == "" || remoteIsLocal(p.opts.Remote) {
		dir, err := p.downloadDir()
		if err != nil {
			return fmt.Errorf("the downloads folder: %w", err)
		}
		params.Behavior, params.DownloadPath = cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, dir
	}
	_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, params)
	return err
}

// downloadDir makes the folder downloads are saved in, and returns its
// absolute path (the browser's working directory is not ours).
func (p *Page) downloadDir() (string, error) {
	if p.opts.DownloadDir == "" {
		dir, err := os.MkdirTemp("", "headroom-downloads-")
		if err != nil {
			return "", err
		}
		p.downloadTmp, p.opts.DownloadDir = dir, dir
	}
	if err := os.MkdirAll(p.opts.DownloadDir, 0o755); err != nil {
		return "", err
	}
	dir, err := filepath.Abs(p.opts.DownloadDir)
	p.opts.DownloadDir = dir
	return dir, err
}

// onDownload follows a download through the browser's events: begun,
// growing (cancelled past the bound), whole (renamed to its name). Each
// wakes whatever waits on the tab's events (downloadsSince).
func (p *Page) onDownload(ev any) {
	defer p.tab().net.observe(ev)
	switch e := ev.(type) {
	case *cdpbrowser.EventDownloadWillBegin:
		d := &Download{URL: p.shownURL(e.URL), Name: p.hide(safeFileName(e.SuggestedFilename)), guid: e.GUID}
		if p.opts.DownloadDir == "" {
			d.Detail, d.done = "the browser is on another machine, where its downloads would be saved", true
		}
		p.mu.Lock()
		p.downloads = append(p.downloads, d)
		p.mu.Unlock()
	case *cdpbrowser.EventDownloadProgress:
		p.progress(e)
	}
}

// progress notes a download's progress; it runs on the browser's event
// loop, so what waits on the browser goes apart, and so does a whole
// file's naming and reading (a PDF's takes up to pdfReadTime).
func (p *Page) progress(e *cdpbrowser.EventDownloadProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.downloadOf(e.GUID)
	if d == nil || d.done || d.keeping {
		return
	}
	d.Bytes = int64(e.ReceivedBytes)
	switch {
	case d.Bytes > p.maxDownload() || int64(e.TotalBytes) > p.maxDownload():
		d.Detail, d.done = fmt.Sprintf("larger than the bound of %d bytes", p.maxDownload()), true
		go p.cancelDownload(d.guid)
	case e.State == cdpbrowser.DownloadProgressStateCompleted && p.kept:
		d.Detail, d.done = "the browser was closing", true
	case e.State == cdpbrowser.DownloadProgressStateCompleted:
		d.keeping = true
		p.keeping.Add(1)
		go p.keep(d, d.guid, d.Name)
	case e.State == cdpbrowser.DownloadProgressStateCanceled:
		if d.Detail == "" {
			d.Detail = "the browser cancelled it"
		}
		d.done = true
	}
}

// keep names a whole download and reads what it says, outside the lock
// (the redaction takes it too); the download is done only then, and
// whatever waits on it is woken.
func (p *Page) keep(d *Download, guid, name string) {
	defer p.keeping.Done()
	name, why := p.keepDownload(guid, name)
	text := ""
	if why == "" {
		text = redact.Text(p.hide(fileText(filepath.Join(p.opts.DownloadDir, name), maxDownloadText)))
	}
	p.mu.Lock()
	d.Name, d.Detail, d.Text, d.Saved, d.done = name, why, text, why == "", true
	p.mu.Unlock()
	p.tab().net.notify()
}

func (p *Page) maxDownload() int64 {
	if p.opts.MaxDownloadBytes > 0 {
		return p.opts.MaxDownloadBytes
	}
	return DefaultMaxDownloadBytes
}

func (p *Page) downloadOf(guid string) *Download {
	for _, d := range p.downloads {
		if d.guid == guid {
			return d
		}
	}
	return nil
}

// cancelDownload stops a download past the bound and removes what of it
// was written.
func (p *Page) cancelDownload(guid string) {
	params := cdpbrowser.CancelDownloadParams{GUID: guid}
	if c := chromedp.FromContext(p.first.ctx); c != nil {
		params.BrowserContextID = c.BrowserContextID
	}
	_, _ = chromedp.CallBrowser(p.first.ctx, cdpbrowser.CancelDownload, params)
	_ = os.Remove(filepath.Join(p.opts.DownloadDir, guid))
}

// keepDownload renames a whole download from its id to its name, made
// unique in the folder; it says why not when it cannot.
func (p *Page) keepDownload(guid, name string) (string, string) {
	dir := p.opts.DownloadDir
	from := filepath.Join(dir, guid)
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 1; i < 1000; i++ {
		to := name
		if i > 1 {
			to = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		// A hard link claims the name only if nothing holds it, with no
		// window for another file to take it between a look and a move.
		if err := os.Link(from, filepath.Join(dir, to)); err == nil {
			_ = os.Remove(from)
			return to, ""
		} else if !os.IsExist(err) {
			return name, "saving it: " + err.Error()
		}
	}
	return name, "no free name for it in the downloads folder"
}

// maxDownloadText bounds what of a downloaded file's text the view shows.
const maxDownloadText = 600

// fileText is the beginning of the file at path, at most limit bytes cut
// at a line's end, when it says something in words: a text file (what
// its first bytes sniff as: text/*, JSON, XML; valid UTF-8) or a PDF's
// words (pdfText); "" for anything else.
func fileText(path string, limit int) string {
	f, err := safefile.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, limit+4)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	if isPDF(buf) {
		info, err := f.Stat()
		if err != nil {
			return ""
		}
		return pdfText(f, info.Size(), limit)
	}
	kind := http.DetectContentType(buf)
	if !strings.HasPrefix(kind, "text/") && !strings.Contains(kind, "json") && !strings.Contains(kind, "xml") {
		return ""
	}
	if n > limit {
		buf = buf[:limit]
		if i := bytes.LastIndexByte(buf, '\n'); i > 0 {
			buf = buf[:i+1]
		}
	}
	return strings.ToValidUTF8(string(buf), "")
}

// safeFileName is a page's suggested file name fit for a folder: its base
// name alone, with no control or path characters, at most 100 runes.
func safeFileName(s string) string {
	s = filepath.Base(strings.ReplaceAll(s, "\\", "/"))
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, s)
	s = strings.TrimLeft(strings.TrimSpace(s), ".")
	if r := []rune(s); len(r) > 100 {
		s = string(r[:100])
	}
	if s == "" {
		return "download"
	}
	return s
}

// downloadCount is how many downloads the page has begun, for an action
// to tell those it began.
func (p *Page) downloadCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.downloads)
}

// downloadsSince waits, until deadline, for the downloads begun since the
// first n to end, and returns them as they stand.
func (p *Page) downloadsSince(ctx context.Context, n int, deadline time.Time) []Download {
	for {
		next := p.tab().net.changed()
		p.mu.Lock()
		var out []Download
		pending := false
		for _, d := range p.downloads[min(n, len(p.downloads)):] {
			out = append(out, *d)
			pending = pending || !d.done
		}
		p.mu.Unlock()
		if !pending || !waitEvent(ctx, next, time.Until(deadline)) {
			for i := range out {
				if !out[i].done && out[i].Detail == "" {
					out[i].Detail = "still downloading when the action ended"
				}
			}
			return out
		}
	}
}

// newDownloads returns the downloads saved since the last snapshot, for
// the next to show what they hold.
func (p *Page) newDownloads() []Download {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Download
	for _, d := range p.downloads {
		if d.done && !d.shown {
			d.shown = true
			if d.Saved {
				out = append(out, *d)
			}
		}
	}
	return out
}

// Downloads lists every download the page began, in order, as each
// stands.
func (p *Page) Downloads() []Download {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Download, len(p.downloads))
	for i, d := range p.downloads {
		out[i] = *d
	}
	return out
}
