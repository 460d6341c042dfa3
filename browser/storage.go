package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/headroom-agent/headroom/internal/safefile"
)

// StorageState is a browser's session, as Playwright's storageState()
// writes and reads it: its cookies, and the localStorage of its origins.
// A file saved by Playwright loads here, and one saved here loads there.
type StorageState struct {
	Cookies []Cookie      `json:"cookies"`
	Origins []OriginState `json:"origins"`
}

// Cookie is one cookie. Domain is the host it was set for; a leading dot
// sends it to subdomains too. Expires is in seconds since the epoch, -1
// for a session cookie. SameSite is "Strict", "Lax", "None" or empty.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite"`
}

// OriginState is the localStorage of one origin, such as
// "https://example.com" or "http://127.0.0.1:8391".
type OriginState struct {
	Origin       string      `json:"origin"`
	LocalStorage []NameValue `json:"localStorage"`
}

// NameValue is one localStorage item.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// maxStorageState bounds a storage state file: sessions are kilobytes.
const maxStorageState = 16 << 20

// LoadStorageState reads a storage state file in Playwright's format. It
// must be a regular file of at most 16 MiB.
func LoadStorageState(path string) (*StorageState, error) {
	data, err := safefile.ReadFile(path, maxStorageState, "a storage state JSON file")
	if err != nil {
		return nil, fmt.Errorf("storage state: %w", err)
	}
	return ParseStorageState(path, data)
}

// ParseStorageState reads a storage state in Playwright's format; file
// names it in errors. An error says where the file is wrong (its line)
// and never quotes what it holds: the values are sessions.
func ParseStorageState(file string, data []byte) (*StorageState, error) {
	where := func(line int) string {
		if line > 0 {
			return fmt.Sprintf("%s:%d", file, line)
		}
		return file
	}
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("storage state %s: %s (want Playwright's storageState JSON: {\"cookies\": [...], \"origins\": [...]})", where(line), fmt.Sprintf(format, args...))
	}
	if err := safefile.CheckJSONDepth(data, 16); err != nil {
		return nil, bad(0, "%v", err)
	}
	var s StorageState
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, bad(lineAt(data, syn.Offset), "not valid JSON")
		case errors.As(err, &typ):
			field := typ.Field
			if field == "" {
				field = "the top level"
			}
			if typ.Type.Kind() == reflect.Float64 && strings.HasPrefix(typ.Value, "number") {
				return nil, bad(lineAt(data, typ.Offset), "%s is a number too large to hold: want seconds since 1970, or -1 for a session cookie", field)
			}
			return nil, bad(lineAt(data, typ.Offset), "%s is a JSON %s: want %s", field, typ.Value, jsonKind(typ.Type.Kind().String()))
		case errors.Is(err, io.EOF):
			return nil, bad(0, "empty")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, bad(lineAt(data, int64(len(data))), "it ends before the JSON does")
		}
		return nil, bad(0, "not valid JSON")
	}
	if dec.More() {
		return nil, bad(lineAt(data, dec.InputOffset()), "more than one JSON value")
	}
	// A field's error quotes no cookie's name or value: they are sessions.
	badField := func(array string, i int, field, problem string) error {
		return fmt.Errorf("storage state %s: %s[%d].%s %s", where(jsonLine(data, array, i, field)), array, i, field, problem)
	}
	for i, c := range s.Cookies {
		if field, problem := cookieProblem(c); problem != "" {
			return nil, badField("cookies", i, field, problem)
		}
	}
	for i, o := range s.Origins {
		h, ok := originHost(o.Origin)
		if !ok {
			return nil, badField("origins", i, "origin", "is not scheme://host[:port], such as https://example.com")
		}
		if err := CheckHost(h); err != nil {
			return nil, badField("origins", i, "origin", "has a host that "+err.Error())
		}
	}
	return &s, nil
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}

// lineAt is the line of data that offset falls on, from 1.
func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// jsonLine is the line of data on which the element index of the top
// level's array writes key, or where the element begins when it does not
// write key; 0 when neither can be found. Keys are matched as
// encoding/json matches them, ignoring case, the last of repeated ones.
func jsonLine(data []byte, array string, index int, key string) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	line := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return line
		}
		if name, _ := k.(string); !strings.EqualFold(name, array) {
			if skipJSON(dec) != nil {
				return line
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return line
		}
		for i := 0; dec.More(); i++ {
			if i == index {
				line = elementLine(dec, data, key)
			} else if skipJSON(dec) != nil {
				return line
			}
		}
		if _, err := dec.Token(); err != nil { // the array's end
			return line
		}
	}
	return line
}

// elementLine reads the next element of dec, an object, returning the line
// of its key (the last of that name), or of its start.
func elementLine(dec *json.Decoder, data []byte, key string) int {
	line := lineAt(data, nextToken(data, dec.InputOffset()))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return line
	}
	for dec.More() {
		at := nextToken(data, dec.InputOffset())
		k, err := dec.Token()
		if err != nil {
			return line
		}
		if name, _ := k.(string); strings.EqualFold(name, key) {
			line = lineAt(data, at)
		}
		if skipJSON(dec) != nil {
			return line
		}
	}
	_, _ = dec.Token()
	return line
}

// nextToken is the offset of the first byte from offset on that begins a
// token: past white space and the separators the decoder has not yet read.
func nextToken(data []byte, offset int64) int64 {
	for offset < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[offset]) >= 0 {
		offset++
	}
	return offset
}

// skipJSON reads past the next value of dec.
func skipJSON(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// originHost is the host of an origin: http or https, a host, no path.
func originHost(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || strings.Trim(u.Path, "/") != "" || u.User != nil || u.RawQuery != "" {
		return "", false
	}
	return u.Hostname(), true
}

// Within is the part of s that lies within domains (browser.Within rules,
// as Options.AllowedDomains is written): cookies by their domain (a
// leading dot allowed), origins by their host. dropped counts the cookies
// and origins left out. No domains keeps nothing.
func (s *StorageState) Within(domains []string) (kept *StorageState, dropped int) {
	kept = &StorageState{Cookies: []Cookie{}, Origins: []OriginState{}}
	if s == nil {
		return kept, 0
	}
	for _, c := range s.Cookies {
		if d := strings.TrimPrefix(c.Domain, "."); d != "" && Within(d, domains) {
			kept.Cookies = append(kept.Cookies, c)
		} else {
			dropped++
		}
	}
	for _, o := range s.Origins {
		if h, ok := originHost(o.Origin); ok && Within(h, domains) {
			kept.Origins = append(kept.Origins, o)
		} else {
			dropped++
		}
	}
	return kept, dropped
}

// WriteFile writes s as Playwright's storageState JSON, readable by the
// user alone (0600), whole or not at all, and never through a link.
func (s *StorageState) WriteFile(path string) error {
	out := s
	if out == nil {
		out = &StorageState{}
	}
	c := *out
	if c.Cookies == nil {
		c.Cookies = []Cookie{}
	}
	if c.Origins == nil {
		c.Origins = []OriginState{}
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteBytes(path, append(data, '\n'), 0o600)
}

// loadStorage applies Options.StorageState before the first navigation:
// its cookies, and a script that fills each kept origin's localStorage
// the first time the tab loads a document of that origin.
func (p *Page) loadStorage() error {
	s := p.opts.StorageState
	if s == nil {
		return nil
	}
	kept, dropped := s, 0
	if len(p.opts.AllowedDomains) > 0 { // a page allowed every domain takes it all
		kept, dropped = s.Within(p.opts.AllowedDomains)
	}
	p.storageDropped = dropped
	if dropped > 0 {
		p.opts.Logf("storage state: %d cookies and origins outside the allowed domains were not loaded", dropped)
	}
	var cookies []*network.CookieParam
	for _, c := range kept.Cookies {
		learnCookie(c.Name, c.Value) // a session the page could show
		cp := &network.CookieParam{
			Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Secure: c.Secure, HTTPOnly: c.HTTPOnly, SameSite: network.CookieSameSite(c.SameSite),
		}
		if cp.Path == "" {
			cp.Path = "/"
		}
		if c.Expires > 0 {
			cp.Expires = cdp.TimeSinceEpoch(c.Expires)
		}
		cookies = append(cookies, cp)
	}
	if len(cookies) > 0 {
		if _, err := chromedp.Call(p.first.ctx, network.SetCookies, network.SetCookiesParams{Cookies: cookies}); err != nil {
			return fmt.Errorf("loading the storage state's cookies: %w", err)
		}
	}
	items := map[string][][2]string{}
	for _, o := range kept.Origins {
		u, _ := url.Parse(o.Origin)
		origin := u.Scheme + "://" + u.Host
		for _, kv := range o.LocalStorage {
			items[origin] = append(items[origin], [2]string{kv.Name, kv.Value})
		}
	}
	if len(items) == 0 {
		return nil
	}
	js, err := json.Marshal(items)
	if err != nil {
		return err
	}
	if _, err := chromedp.Call(p.first.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: fmt.Sprintf(localStorageJS, js), RunImmediately: new(true),
	}); err != nil {
		return fmt.Errorf("loading the storage state's localStorage: %w", err)
	}
	return nil
}

// localStorageJS fills the localStorage of the document's origin from the
// storage state, once a tab: a mark in the origin's sessionStorage (the
// tab's own) says it is done, so what the page changes later stays.
const localStorageJS = `(() => {
  const items = %s;
  const it = items[location.origin];
  if (!it) return;
  try {
    const done = '__headroom_storage_state';
    if (sessionStorage.getItem(done)) return;
    for (const [k, v] of it) localStorage.setItem(k, v);
    sessionStorage.setItem(done, '1');
  } catch (e) {}
})()`

// StorageDropped is how many cookies and origins of Options.StorageState
// lay outside the allowed domains and were not loaded.
func (p *Page) StorageDropped() int { return p.storageDropped }

// visit notes the origin of a document the tab loaded, whose
// localStorage StorageState saves.
func (p *Page) visit(f *cdp.Frame) {
	if f == nil {
		return
	}
	o := f.SecurityOrigin
	if _, ok := originHost(o); !ok {
		return
	}
	p.mu.Lock()
	if !slices.Contains(p.origins, o) {
		p.origins = append(p.origins, o)
	}
	p.mu.Unlock()
}

// StorageState is the browser's session as Playwright saves it: every
// cookie of the run's browser context and the localStorage of each origin
// the tab visited that a frame of it is still on, kept within the allowed
// domains (everything, on a page allowed every domain).
func (p *Page) StorageState(ctx context.Context) (*StorageState, error) {
	s := &StorageState{Cookies: []Cookie{}, Origins: []OriginState{}}
	err := p.do(ctx, "storage state", "", p.opts.ActionTimeout, func(ctx context.Context) error {
		res, err := chromedp.CallBrowser(ctx, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: chromedp.FromContext(p.first.ctx).BrowserContextID})
		if err != nil {
			return err
		}
		for _, c := range res.Cookies {
			exp := c.Expires
			if c.Session {
				exp = -1
			}
			s.Cookies = append(s.Cookies, Cookie{
				Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Expires: exp,
				HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite),
			})
		}
		p.mu.Lock()
		origins := append([]string(nil), p.origins...)
		p.mu.Unlock()
		for _, o := range origins {
			items, err := chromedp.Call(ctx, domstorage.GetDOMStorageItems, domstorage.GetDOMStorageItemsParams{
				StorageID: &domstorage.StorageID{StorageKey: domstorage.SerializedStorageKey(o + "/"), IsLocalStorage: true},
			})
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				continue // no frame of the tab is on it now: its storage cannot be read
			}
			st := OriginState{Origin: o, LocalStorage: []NameValue{}}
			for _, it := range items.Entries {
				if len(it) == 2 {
					st.LocalStorage = append(st.LocalStorage, NameValue{Name: it[0], Value: it[1]})
				}
			}
			s.Origins = append(s.Origins, st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.opts.AllowedDomains) > 0 {
		s, _ = s.Within(p.opts.AllowedDomains)
	}
	return s, nil
}
