package learn

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
)

// Variants of the site: how it changed since a run was learned.
const (
	Same         = "same"
	Renamed      = "renamed"      // the buttons say something else
	Moved        = "moved"        // the list moved down the page, behind other controls
	Interstitial = "interstitial" // a notice to pass before the list
	Swapped      = "swapped"      // two like items traded places
)

// Variants are the changed sites, in the order a bench runs them.
var Variants = []string{Renamed, Moved, Interstitial, Swapped}

// Site is a shop of like items, each card its own "Add to cart" button,
// serving one variant at a time and logging what was added, so that a
// success the check did not verify cannot pass unseen.
type Site struct {
	*httptest.Server
	mu      sync.Mutex
	variant string
	added   []string
}

// Products are the site's items, in the order it first lists them.
var Products = []string{"Walnut desk", "Oak chair", "Birch shelf", "Maple table", "Pine bench", "Cedar stool"}

// NewSite serves the shop on loopback.
func NewSite() *Site {
	s := &Site{variant: Same}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /shop", s.shop)
	mux.HandleFunc("GET /cart", s.cart)
	s.Server = httptest.NewServer(mux)
	return s
}

// Serve switches the site to a variant.
func (s *Site) Serve(variant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.variant = variant
}

// Added is what was added to the cart so far, in order.
func (s *Site) Added() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.added)
}

func (s *Site) shop(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	v := s.variant
	s.mu.Unlock()
	if v == Interstitial && r.URL.Query().Get("seen") == "" {
		page(w, "Notice", `<h1>Notice</h1><p>Deliveries resume on Monday.</p><a href="/shop?seen=1">Continue to the shop</a>`)
		return
	}
	items := slices.Clone(Products)
	if v == Swapped {
		items[0], items[1] = items[1], items[0]
	}
	label := "Add to cart"
	if v == Renamed {
		label = "Add to basket"
	}
	var b strings.Builder
	for i, p := range items {
		fmt.Fprintf(&b, `<li><h3>%s</h3><p>%d EUR</p><button onclick="location.href='/cart?add=%s'">%s</button></li>`,
			html.EscapeString(p), 40+15*i, strings.ReplaceAll(p, " ", "+"), label)
	}
	list := "<ul>" + b.String() + "</ul>"
	if v == Moved {
		list = `<p>Free delivery over 100 EUR.</p><form><input name="q" placeholder="Search the shop"><button type="button">Search</button></form><h2>All products</h2>` + list
	}
	page(w, "Shop", "<h1>Furniture</h1>"+list)
}

func (s *Site) cart(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("add")
	s.mu.Lock()
	s.added = append(s.added, p)
	s.mu.Unlock()
	page(w, "Cart", "<h1>Your cart</h1><p>"+html.EscapeString(p)+" is in your cart.</p>")
}

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
}

// Task is the shop's one task file, its product a parameter.
func (s *Site) Task() string {
	return `name: add-to-cart
start_url: ` + s.URL + `/shop
goal: Add the {{product}} to the cart.
params: {product: Walnut desk}
allowed_domains: [127.0.0.1]
max_steps: 6
deadline: 2m
success: {text: "{{product}} is in your cart."}
`
}
