// Package testsite serves the sites under testdata/pages — a shop with
// search, results and product pages; a sign-up form with validation; a
// feed that loads by fetch and XHR after load; a long catalogue; a store's
// category page of realistic size — with the little API they call; and a
// supplier portal behind a login (portal.go). Browser tests and the
// recordings in testdata/pages use it.
package testsite

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
)

// SessionCookie is the value every response sets, so tests can check it
// never reaches a recording.
const SessionCookie = "SECRETCOOKIE7731"

// Dir is testdata/pages in this module.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "pages")
}

type item struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Price int    `json:"price"`
	Desc  string `json:"desc,omitempty"`
}

var catalogue = []item{
	{1, "Walnut writing desk", 640, "Solid walnut, two drawers, 120 × 60 cm."},
	{2, "Oak standing desk", 890, "Electric lift from 65 to 125 cm."},
	{3, "Iron bookshelf", 310, "Five shelves, powder-coated steel."},
	{4, "Oak dining table", 1150, "Seats eight; oiled finish."},
	{5, "Walnut side table", 180, "Round, 45 cm across."},
}

// Handler is the site: static pages plus /api and the form's POST.
func Handler() http.Handler { return HandlerOf(Dir()) }

// HandlerOf is Handler with its pages from dir, a copy of testdata/pages.
func HandlerOf(dir string) http.Handler {
	h, _ := HandlerWithPortal(dir)
	return h
}

// HandlerWithPortal is HandlerOf, and the portal it serves, whose logins
// a test counts.
func HandlerWithPortal(dir string) (http.Handler, Portal) {
	var counter atomic.Int64
	mux := http.NewServeMux()
	portal := newPortal()
	portal.register(mux)
	files := http.FileServer(http.Dir(dir))
	mux.Handle("/", files)
	mux.HandleFunc("GET /api/search", func(w http.ResponseWriter, r *http.Request) {
		q := strings.ToLower(r.URL.Query().Get("q"))
		out := []item{}
		for _, it := range catalogue {
			if q == "" || strings.Contains(strings.ToLower(it.Name), q) {
				out = append(out, item{ID: it.ID, Name: it.Name, Price: it.Price})
			}
		}
		writeJSON(w, r, map[string]any{"items": out})
	})
	mux.HandleFunc("GET /api/item", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.URL.Query().Get("id"))
		for _, it := range catalogue {
			if it.ID == id {
				writeJSON(w, r, it)
				return
			}
		}
		http.Error(w, `{"error": "no such item"}`, http.StatusNotFound)
	})
	mux.HandleFunc("GET /api/feed", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		posts := map[int][]map[string]string{
			1: {{"author": "Ada", "text": "Shipped the new search page."}, {"author": "Lin", "text": "Desk orders up 12% this week."}, {"author": "Sam", "text": "Warehouse closed on Friday."}},
			2: {{"author": "Ada", "text": "Fixed the checkout button."}, {"author": "Kai", "text": "Three new oak suppliers."}},
		}[page]
		if posts == nil {
			posts = []map[string]string{}
		}
		writeJSON(w, r, map[string]any{"posts": posts, "more": page < 2})
	})
	mux.HandleFunc("GET /api/stats", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, r, map[string]int{"members": 12, "online": 3})
	})
	mux.HandleFunc("GET /api/counter", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(strconv.FormatInt(counter.Add(1), 10)))
	})
	mux.HandleFunc("POST /form/signup", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v := url.Values{"name": {r.PostForm.Get("name")}, "plan": {r.PostForm.Get("plan")}}
		http.Redirect(w, r, "/form/welcome.html?"+v.Encode(), http.StatusSeeOther)
	})
	// The orders' upload form: what arrived, by its size and digest.
	mux.HandleFunc("POST /orders/upload", receiveUpload)
	// A page that never finishes loading, for load timeouts.
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: SessionCookie, Path: "/"})
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	}), Portal{portal}
}

// receiveUpload answers the upload form with the size and the first 16
// hex digits of the SHA-256 of the file it was sent, so a test can tell
// the bytes arrived whole.
func receiveUpload(w http.ResponseWriter, r *http.Request) {
	f, h, err := r.FormFile("invoice")
	if err != nil {
		http.Error(w, "no file: "+err.Error(), http.StatusBadRequest)
		return
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, io.LimitReader(f, 10<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html lang=en><head><meta charset=utf-8><title>Invoice received</title></head><body>"+
		"<h1>Invoice received</h1><p>Received %s: %d bytes, digest %x.</p><p><a href=\"index.html\">All orders</a></p></body></html>",
		html.EscapeString(h.Filename), n, sum.Sum(nil)[:8])
}

// writeJSON answers gzip-compressed when the client takes it, so the
// recorder sees a content-encoded response.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		_ = json.NewEncoder(gz).Encode(v)
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// Start serves the sites on a loopback port; addr "" picks a free one.
func Start(addr string) (*httptest.Server, error) {
	s := httptest.NewUnstartedServer(Handler())
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		s.Listener.Close()
		s.Listener = l
	}
	s.Start()
	return s, nil
}
