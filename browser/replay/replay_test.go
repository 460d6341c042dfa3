package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func recorded(t *testing.T, xs ...Exchange) *Archive {
	t.Helper()
	r := NewRecorder(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), DefaultRedactor(), "headroom", "test")
	for i, x := range xs {
		if x.Seq == 0 {
			x.Seq = int64(i + 1)
		}
		r.Add(x)
	}
	var buf bytes.Buffer
	if err := r.Archive().Write(&buf); err != nil {
		t.Fatal(err)
	}
	a, err := Decode("test.har", buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	return a
}

func get(u string) Exchange {
	return Exchange{Method: "GET", URL: u, Status: 200, ResponseHeaders: []Header{{"Content-Type", "text/plain"}}, Body: []byte("body of " + u)}
}

func TestRoundTripKeepsTextAsTextAndBinaryAsBase64(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}
	a := recorded(t,
		get("http://a.test/"),
		Exchange{Method: "GET", URL: "http://a.test/logo.png", Status: 200, ResponseHeaders: []Header{{"Content-Type", "image/png"}}, Body: png},
	)
	var buf bytes.Buffer
	if err := a.Write(&buf); err != nil {
		t.Fatal(err)
	}
	raw := buf.String()
	if !strings.Contains(raw, `"text": "body of http://a.test/"`) {
		t.Errorf("text body not written as text:\n%s", raw)
	}
	if !strings.Contains(raw, `"encoding": "base64"`) {
		t.Errorf("binary body has no base64 encoding:\n%s", raw)
	}
	if got := a.Log.Entries[1].Response.Content.Text; !bytes.Equal(got, png) {
		t.Errorf("binary body after round trip = %v, want %v", got, png)
	}
	if got := a.Recorded(); !got.Equal(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Errorf("Recorded = %v", got)
	}
}

func TestRedactionByDefault(t *testing.T) {
	a := recorded(t, Exchange{
		Method: "GET", URL: "http://a.test/x?q=1&api-key=SECRETKEY", Status: 200,
		RequestHeaders:  map[string]string{"Authorization": "Bearer SECRETTOKEN", "Cookie": "s=SECRETCOOKIE", "Accept": "*/*"},
		ResponseHeaders: []Header{{"Set-Cookie", "s=SECRETSET; Path=/"}, {"Content-Type", "text/html"}},
		Body:            []byte("ok"),
	})
	var buf bytes.Buffer
	_ = a.Write(&buf)
	for _, s := range []string{"SECRETKEY", "SECRETTOKEN", "SECRETCOOKIE", "SECRETSET"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("%s survived redaction", s)
		}
	}
	if !strings.Contains(buf.String(), "*/*") {
		t.Error("a harmless header was redacted")
	}
	// The browser asks with the real key; replay redacts the same way and matches.
	m := NewMatcher(a, Options{Redactor: DefaultRedactor()})
	if _, ok := m.Match(Request{Method: "GET", URL: "http://a.test/x?q=1&api-key=OTHER"}); !ok {
		t.Error("request with a redacted parameter did not match")
	}
	if got := ResponseHeaders(a.Log.Entries[0]); len(got) != 1 || got[0].Name != "Content-Type" {
		t.Errorf("replayed headers = %v, want only Content-Type", got)
	}
}

func TestDuplicatesServedInRecordedOrder(t *testing.T) {
	x1, x2 := get("http://a.test/poll"), get("http://a.test/poll")
	x1.Body, x2.Body = []byte("first"), []byte("second")
	a := recorded(t, x1, x2)
	m := NewMatcher(a, Options{})
	var got []string
	for range 3 {
		mt, ok := m.Match(Request{Method: "GET", URL: "http://a.test/poll"})
		if !ok {
			t.Fatal("miss")
		}
		got = append(got, string(mt.Entry.Response.Content.Text))
	}
	if strings.Join(got, ",") != "first,second,second" {
		t.Errorf("served %v, want first,second,second", got)
	}
	m.Reset()
	if mt, _ := m.Match(Request{Method: "GET", URL: "http://a.test/poll"}); string(mt.Entry.Response.Content.Text) != "first" {
		t.Error("Reset did not restart the order")
	}
}

func TestPostMatchedByBody(t *testing.T) {
	p := func(body, answer string) Exchange {
		return Exchange{Method: "POST", URL: "http://a.test/submit", RequestBody: []byte(body),
			RequestHeaders: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			Status:         200, ResponseHeaders: []Header{{"Content-Type", "text/plain"}}, Body: []byte(answer)}
	}
	a := recorded(t, p("name=ann", "hi ann"), p("name=bob", "hi bob"))
	m := NewMatcher(a, Options{})
	mt, ok := m.Match(Request{Method: "POST", URL: "http://a.test/submit", Body: []byte("name=bob")})
	if !ok || string(mt.Entry.Response.Content.Text) != "hi bob" {
		t.Fatalf("POST name=bob got %v %q", ok, mt.Entry.Response.Content.Text)
	}
	if _, ok := m.Match(Request{Method: "POST", URL: "http://a.test/submit", Body: []byte("name=eve")}); ok {
		t.Error("a POST with an unrecorded body matched")
	}
	if _, ok := m.Match(Request{Method: "GET", URL: "http://a.test/submit"}); ok {
		t.Error("GET matched a recorded POST")
	}
	if s := m.Stats(); s.Misses != 2 || s.Served != 1 || len(s.Missed) != 2 {
		t.Errorf("stats = %+v", s)
	}
}

func TestMultipartBoundaryIgnored(t *testing.T) {
	body := func(b string) string {
		return "--" + b + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--" + b + "--\r\n"
	}
	a := recorded(t, Exchange{Method: "POST", URL: "http://a.test/up", RequestBody: []byte(body("AAA")),
		RequestHeaders: map[string]string{"Content-Type": "multipart/form-data; boundary=AAA"}, Status: 200})
	m := NewMatcher(a, Options{})
	if _, ok := m.Match(Request{Method: "POST", URL: "http://a.test/up", Body: []byte(body("BBB")),
		Headers: map[string]string{"content-type": "multipart/form-data; boundary=BBB"}}); !ok {
		t.Error("multipart body with another boundary did not match")
	}
}

func TestHeaderScoreBreaksTies(t *testing.T) {
	x1, x2 := get("http://a.test/api"), get("http://a.test/api")
	x1.RequestHeaders = map[string]string{"Accept": "text/html"}
	x2.RequestHeaders = map[string]string{"Accept": "application/json"}
	x2.Body = []byte("json")
	a := recorded(t, x1, x2)
	m := NewMatcher(a, Options{})
	mt, _ := m.Match(Request{Method: "GET", URL: "http://a.test/api", Headers: map[string]string{"accept": "application/json"}})
	if string(mt.Entry.Response.Content.Text) != "json" {
		t.Errorf("got %q, want the entry whose headers match", mt.Entry.Response.Content.Text)
	}
}

func TestFuzzyOnlyWhenAskedAndCounted(t *testing.T) {
	a := recorded(t, get("http://a.test/s?q=widget&t=1"), get("http://a.test/s?q=gadget&t=1"))
	req := Request{Method: "GET", URL: "http://a.test/s?q=widget&t=2"}
	if _, ok := NewMatcher(a, Options{}).Match(req); ok {
		t.Fatal("fuzzy match without Fuzzy")
	}
	m := NewMatcher(a, Options{Fuzzy: true})
	mt, ok := m.Match(req)
	if !ok || !mt.Fuzzy || mt.Index != 0 {
		t.Fatalf("fuzzy match = %+v %v, want entry 0", mt, ok)
	}
	if s := m.Stats(); s.Fuzzy != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// A replay can start where the archive holds a GET of the page as a
// browser asks for it; by its path alone only when fuzzy.
func TestHasPage(t *testing.T) {
	a := recorded(t, get("http://a.test/"), get("http://a.test/s?q=widget"), Exchange{Method: "POST", URL: "http://a.test/form", Status: 200})
	exact, fuzzy := NewMatcher(a, Options{}), NewMatcher(a, Options{Fuzzy: true})
	for _, c := range []struct {
		url          string
		exact, fuzzy bool
	}{
		{"http://a.test", true, true},
		{"http://a.test/#top", true, true},
		{"http://a.test/s?q=widget#results", true, true},
		{"http://a.test/s?q=gadget", false, true},
		{"http://a.test/form", false, false}, // recorded as a POST
		{"http://b.test/", false, false},
		{"://not a url", false, false},
	} {
		if got := exact.HasPage(c.url); got != c.exact {
			t.Errorf("HasPage(%q) = %v, want %v", c.url, got, c.exact)
		}
		if got := fuzzy.HasPage(c.url); got != c.fuzzy {
			t.Errorf("fuzzy HasPage(%q) = %v, want %v", c.url, got, c.fuzzy)
		}
	}
	if s := fuzzy.Stats(); s.Served+s.Fuzzy+s.Misses != 0 {
		t.Errorf("HasPage counted %+v", s)
	}
}

func TestDecodeErrorsNameThePlace(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\"log\": {\n\"entries\": [}", "line 2"},
		{`{"log": {"entries": [{"request": {"method": "GET"}, "response": {"status": 200}}]}}`, "log.entries[0].request"},
		{`{"log": {"entries": [{"request": {"method": "GET", "url": "http://x/"}, "response": {"status": 0}}]}}`, "log.entries[0].response.status"},
		{`{"nolog": 1}`, "no \"log\""},
		{`{"log": {"entries": [{"request": {"method": "GET", "url": "http://x/"}, "response": {"status": 200, "content": {"text": "!!", "encoding": "base64"}}}]}}`, "site.har"},
	} {
		_, err := Decode("site.har", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "site.har") {
			t.Errorf("Decode(%q) = %v, want an error naming %q", c.in, err, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"log": {"entries": [{"request": {"method": "GET", "url": "http://x/"}, "response": {"status": 200, "content": {"text": "aGk=", "encoding": "base64"}}}]}}`))
	f.Add([]byte(`{"log": {"pages": [{"startedDateTime": "2026-01-01T00:00:00Z"}]}}`))
	f.Add([]byte(`{"log": {"entries": [null]}}`))
	f.Add([]byte(strings.Repeat("[", 100000)))
	f.Add([]byte(`{"log": {"comment": "` + strings.Repeat("[", 100) + `"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Decode("f.har", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.har: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// What decodes must match and write without panicking.
		m := NewMatcher(a, Options{Fuzzy: true, Redactor: DefaultRedactor()})
		for _, e := range a.Log.Entries {
			m.Match(Request{Method: e.Request.Method, URL: e.Request.URL})
		}
		var buf bytes.Buffer
		if err := a.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := Decode("again.har", buf.Bytes()); err != nil {
			t.Fatalf("written archive does not decode: %v", err)
		}
	})
}

func TestFormSecretsRedactedAndStillMatched(t *testing.T) {
	ct := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	a := recorded(t, Exchange{Method: "POST", URL: "http://a.test/login", RequestHeaders: ct,
		RequestBody: []byte("user=ada&password=hunter2-SECRET"), Status: 303,
		ResponseHeaders: []Header{{"Location", "/home"}}})
	var buf bytes.Buffer
	_ = a.Write(&buf)
	if strings.Contains(buf.String(), "hunter2-SECRET") {
		t.Fatal("a password field reached the HAR")
	}
	m := NewMatcher(a, Options{Redactor: DefaultRedactor()})
	if _, ok := m.Match(Request{Method: "POST", URL: "http://a.test/login", Headers: ct, Body: []byte("user=ada&password=other")}); !ok {
		t.Error("the same form with a redacted field did not match")
	}
	if _, ok := m.Match(Request{Method: "POST", URL: "http://a.test/login", Headers: ct, Body: []byte("user=bob&password=x")}); ok {
		t.Error("a different form matched")
	}
	if got := a.Log.Entries[0].Response.RedirectURL; got != "http://a.test/home" {
		t.Errorf("redirectURL = %q", got)
	}
}

func TestRedactionOfBodiesHeadersAndParametersByName(t *testing.T) {
	jsonBody := func(pw string) []byte {
		return []byte(`{"user":"ann","password":"` + pw + `1","api_key":"` + pw + `2","credentials":{"password":"` + pw + `3"},` +
			`"refresh_token":"` + pw + `4","secret":"` + pw + `5","apiKey":"` + pw + `6","items":[{"token":"` + pw + `7"}]}`)
	}
	multipart := func(boundary, pw string) []byte {
		return []byte("--" + boundary + "\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nann\r\n" +
			"--" + boundary + "\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n" + pw + "8\r\n--" + boundary + "--\r\n")
	}
	headers := func(pw, ct string) map[string]string {
		return map[string]string{"Authentication": pw + "9", "X-Session-Token": pw + "10", "Accept": "*/*", "Content-Type": ct}
	}
	a := recorded(t,
		Exchange{Method: "POST", URL: "http://a.test/login?code=SECRETc&session_id=SECRETs&auth=SECRETa&q=1", Status: 200,
			RequestHeaders: headers("SECRET", "text/plain;charset=UTF-8"), RequestBody: jsonBody("SECRET"), Body: []byte("json")},
		Exchange{Method: "POST", URL: "http://a.test/upload", Status: 200,
			RequestHeaders: headers("SECRET", "multipart/form-data; boundary=BOUNDARYA"), RequestBody: multipart("BOUNDARYA", "SECRET"), Body: []byte("multi")},
	)
	var buf bytes.Buffer
	_ = a.Write(&buf)
	if strings.Contains(buf.String(), "SECRET") {
		t.Errorf("a secret survived redaction:\n%s", buf.String())
	}
	for _, s := range []string{`\"user\":\"ann\"`, "*/*", "q=1", "name=\\\"user\\\"\\r\\n\\r\\nann"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("%s was redacted or lost:\n%s", s, buf.String())
		}
	}
	// The browser asks again with other secrets: both requests still match.
	m := NewMatcher(a, Options{Redactor: DefaultRedactor()})
	if mt, ok := m.Match(Request{Method: "POST", URL: "http://a.test/login?code=OTHERc&session_id=OTHERs&auth=OTHERa&q=1",
		Headers: headers("OTHER", "text/plain;charset=UTF-8"), Body: jsonBody("OTHER")}); !ok || string(mt.Entry.Response.Content.Text) != "json" {
		t.Error("a JSON request with redacted fields did not match")
	}
	if mt, ok := m.Match(Request{Method: "POST", URL: "http://a.test/upload",
		Headers: headers("OTHER", "multipart/form-data; boundary=BOUNDARYB"), Body: multipart("BOUNDARYB", "OTHER")}); !ok || string(mt.Entry.Response.Content.Text) != "multi" {
		t.Error("a multipart request with a redacted field did not match")
	}
	// A field kept out of the list is recorded; one added is redacted.
	r := DefaultRedactor()
	r.Keep("code")
	r.Add("X-Tenant")
	if got := r.URL("http://a.test/?code=c1&x_tenant=t1"); got != "http://a.test/?code=c1&x_tenant=%5Bredacted%5D" {
		t.Errorf("Keep/Add: %s", got)
	}
	if got := string(r.Body("application/json", []byte(`{"xTenant":"t","code":"c"}`))); got != `{"xTenant":"[redacted]","code":"c"}` {
		t.Errorf("Keep/Add body: %s", got)
	}
}

func TestAnArchiveRecordedWithANameKeptStillMatches(t *testing.T) {
	// Recorded with nothing redacted (a name kept, or an older list).
	r := NewRecorder(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), &Redactor{}, "headroom", "test")
	r.Add(Exchange{Seq: 1, Method: "POST", URL: "http://a.test/login?code=c1", Status: 200,
		RequestHeaders: map[string]string{"Content-Type": "application/json"}, RequestBody: []byte(`{"user":"ann","password":"p1"}`), Body: []byte("in")})
	var buf bytes.Buffer
	if err := r.Archive().Write(&buf); err != nil {
		t.Fatal(err)
	}
	a, err := Decode("kept.har", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := NewMatcher(a, Options{Redactor: DefaultRedactor()})
	if _, ok := m.Match(Request{Method: "POST", URL: "http://a.test/login?code=c2", Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"user":"ann","password":"p2"}`)}); !ok {
		t.Error("a request did not match an entry recorded with its secrets in clear")
	}
	if _, ok := m.Match(Request{Method: "POST", URL: "http://a.test/login?code=c2", Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"user":"bob","password":"p2"}`)}); ok {
		t.Error("a request with another user matched")
	}
}

func TestLoadAndWriteFileRefuseWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := Load(p); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s) = %v", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) hangs", p)
		}
	}
	start := time.Now()
	if _, err := Decode("d.har", []byte(strings.Repeat("[", 100000))); err == nil || !strings.Contains(err.Error(), "nested") || time.Since(start) > 5*time.Second {
		t.Errorf("100k [: %v", err)
	}
	a := New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "headroom", "test")
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/full", out} {
		if err := a.WriteFile(p); err == nil {
			t.Errorf("WriteFile(%s) wrote", p)
		}
	}
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("/dev/full replaced: %v", err)
	}
	if _, err := os.Stat(out + ".tmp"); err == nil {
		t.Error("out.tmp left behind")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
	good := filepath.Join(dir, "a.har")
	if err := a.WriteFile(good); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(good); err != nil {
		t.Errorf("read back: %v", err)
	}
}

// A value redacted by name (a session cookie, a token parameter) is
// scrubbed where the server echoed it, in any response body and the
// page's title; short values and other text are left alone.
func TestRecorderScrubsEchoedSecrets(t *testing.T) {
	rec := NewRecorder(time.Now(), DefaultRedactor(), "t", "1")
	rec.Add(Exchange{Seq: 2, Method: "GET", URL: "http://shop.example/api/me", Status: 200,
		ResponseHeaders: []Header{{"Content-Type", "application/json"}},
		Body:            []byte(`{"hello":"sess-77f3a9c2b1","pin":"1234"}`)})
	rec.Add(Exchange{Seq: 1, Method: "GET", URL: "http://shop.example/?access_token=tok-abcdef123456&pin=1234", Status: 200,
		RequestHeaders:  map[string]string{"Cookie": "sid=sess-77f3a9c2b1; theme=dark"},
		ResponseHeaders: []Header{{"Content-Type", "text/html"}},
		Body:            []byte(`<a href="/next?access_token=tok-abcdef123456">next</a> pin 1234`)})
	rec.SetTitle("Welcome tok-abcdef123456")
	a := rec.Archive()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range a.Log.Entries {
		b = append(b, e.Response.Content.Text...)
	}
	for _, secret := range []string{"sess-77f3a9c2b1", "tok-abcdef123456"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%s is still in the archive: %s", secret, b)
		}
	}
	if !strings.Contains(string(b), "pin 1234") || !strings.Contains(string(b), `"pin":"1234"`) {
		t.Errorf("scrubbing took more than the secrets: %s", b)
	}
}

func TestAMatcherKnowsItsArchivesNameAndPages(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pages", "shop.har")
	a, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Source != path {
		t.Errorf("Source = %q, want %q", a.Source, path)
	}
	m := NewMatcher(a, Options{Redactor: DefaultRedactor()})
	if m.Source() != path || m.Name() != "shop.har" {
		t.Errorf("Source, Name = %q, %q", m.Source(), m.Name())
	}
	const o = "http://127.0.0.1:8391"
	// Documents (HTML, or a redirect) by GET, once each; no stylesheet,
	// image, API answer or plain-text 404.
	want := []string{o + "/shop/index.html", o + "/shop/", o + "/shop/newsletter.html", o + "/shop/results.html?q=desk", o + "/shop/item.html?id=2"}
	if got := m.Pages(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Pages = %q, want %q", got, want)
	}
	if got := m.URLs("GET"); len(got) != 10 { // style.css three times, once here
		t.Errorf("URLs(GET) = %d: %q", len(got), got)
	}
	if got := NewMatcher(&Archive{Log: a.Log}, Options{}).Name(); got != "the replayed archive" {
		t.Errorf("an archive from memory is called %q", got)
	}
}

func TestNearest(t *testing.T) {
	urls := []string{
		"http://a.test/shop/",
		"http://a.test/shop/results.html?q=desk",
		"http://b.test/shop/item.html?id=2",
		"http://a.test/shop/item.html?id=2",
		"http://a.test/form/",
	}
	for _, c := range []struct {
		u    string
		n    int
		want []string
	}{
		// Same path first, then the longest path and query in common.
		{"http://a.test/shop/item.html?id=3", 2, []string{urls[3], urls[0]}},
		// Nothing in common but the host: recorded order.
		{"http://a.test/x", 2, []string{urls[0], urls[1]}},
		{"http://a.test/form/signup", 1, []string{urls[4]}},
		// Another host comes after every URL on the asked one.
		{"http://b.test/shop/", 1, []string{urls[2]}},
		{"http://a.test/", 10, []string{urls[0], urls[1], urls[3], urls[4], urls[2]}},
		{"http://a.test/", 0, []string{}},
	} {
		if got := Nearest(c.u, urls, c.n); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("Nearest(%s, %d) = %q, want %q", c.u, c.n, got, c.want)
		}
	}
	if got := Nearest("http://a.test/", nil, 3); len(got) != 0 {
		t.Errorf("Nearest of none = %q", got)
	}
}
