package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
)

// File is a file on disk the page may be given by name: what a task
// declares under files:, and nothing else on disk, is what an upload can
// reach.
type File struct {
	Name string
	Path string
}

// FilePlaceholder is how an upload names the file called name, in its
// written form and in prompts: the model sees the name, never the path.
func FilePlaceholder(name string) string { return "<file:" + name + ">" }

// filePlaceholderRE reads a FilePlaceholder back.
var filePlaceholderRE = regexp.MustCompile(`^<file:([^<>]*)>$`)

// FileName is the name a FilePlaceholder gives, or s itself when it is
// none.
func FileName(s string) string {
	if m := filePlaceholderRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		return m[1]
	}
	return strings.TrimSpace(s)
}

// CheckFileName says why name cannot be a file's, nil when it can: it
// stands in a placeholder and in messages, as a secret's name does.
func CheckFileName(name string) error {
	if !secretNameRE.MatchString(name) {
		return fmt.Errorf("%q is not a file name for a task: a word of letters, digits, '_', '.' or '-' (at most 64)", name)
	}
	return nil
}

// checkFiles refuses files an upload could not give: a bad or repeated
// name, a path that is no regular file.
func (o *Options) checkFiles() error {
	seen := map[string]bool{}
	for _, f := range o.Files {
		if err := CheckFileName(f.Name); err != nil {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: "files", Err: err}
		}
		if seen[f.Name] {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: "files", Err: fmt.Errorf("file %s is given twice", f.Name)}
		}
		seen[f.Name] = true
		if st, err := os.Stat(f.Path); err != nil || !st.Mode().IsRegular() {
			return &Error{Op: "launch", Kind: ErrLaunch, Detail: "files", Err: fmt.Errorf("file %s: %s is not a regular file that can be read", f.Name, f.Path)}
		}
	}
	return nil
}

// Upload gives a file input the file the task declared as name (or its
// FilePlaceholder), as a person choosing it in the file dialog would: the
// input's change event fires and a form sends it as chosen. Only a
// declared file can be given, and only to an input in frames on the
// allowed domains (ErrSecretDomain otherwise, nothing given); an element
// that is no file input is ErrNotInput.
func (p *Page) Upload(ctx context.Context, t Target, name string) (Outcome, error) {
	name = FileName(name)
	f, ok := p.file(name)
	if !ok {
		return Outcome{}, fail("upload", targetName(t), ErrNotFound, "%s names no file the task declares: declare it under files:", FilePlaceholder(name))
	}
	path, err := filepath.Abs(f.Path)
	if err != nil {
		return Outcome{}, fail("upload", targetName(t), ErrNotFound, "file %s: %v", name, err)
	}
	out, err := p.act(ctx, "upload", t, func(ctx context.Context, id cdp.BackendNodeID) (string, error) {
		if err := p.checkUploadHosts(ctx, id); err != nil {
			return "", err
		}
		isFile, err := callOn[bool](ctx, id, `function() { return this.tagName === 'INPUT' && this.type === 'file'; }`)
		if err != nil {
			return "", err
		}
		if !isFile {
			return "", fail("", "", ErrNotInput, "it is not a file input: upload gives a file to an input of type file")
		}
		if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{path}, BackendNodeID: id}); err != nil {
			return "", err
		}
		return "chose " + FilePlaceholder(name), nil
	})
	return out, err
}

// file is the declared file called name.
func (p *Page) file(name string) (File, bool) {
	for _, f := range p.opts.Files {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

// checkUploadHosts refuses an input in a frame off the allowed domains:
// a file goes to the sites the task names, as a secret does. A page
// confined to none may be given one anywhere.
func (p *Page) checkUploadHosts(ctx context.Context, id cdp.BackendNodeID) error {
	if len(p.opts.AllowedDomains) == 0 {
		return nil
	}
	frames, err := nodeFrames(ctx, id)
	if err != nil {
		return err
	}
	for _, f := range frames {
		if h := frameHost(f); !p.allow.host(h) {
			return fail("", "", ErrSecretDomain, "the file input is in a frame on %s, outside the allowed domains: nothing was given", hostOrNone(h))
		}
	}
	return nil
}
