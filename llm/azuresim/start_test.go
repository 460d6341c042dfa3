package azuresim

import (
	"net/http"
	"testing"
)

// Start returns with every address bound: the main one and a resource's
// own answer at once, and stop answering after Close.
func TestStartServesEveryAddress(t *testing.T) {
	s, err := New(Config{Resources: []Resource{
		{Name: "main", Deployments: []Deployment{{Name: "d", Model: "gpt-4o", TPM: 60000}}},
		{Name: "own", Addr: "127.0.0.1:0", Deployments: []Deployment{{Name: "d", Model: "gpt-4o", TPM: 60000}}},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bound) != 2 || r.Bound[0].Resource != "" || r.Bound[1].Resource != "127.0.0.1:0" || r.URL != "http://"+r.Bound[0].Addr {
		t.Fatalf("bound %+v, URL %s", r.Bound, r.URL)
	}
	for _, b := range r.Bound {
		if got := post(t, chatURL("http://"+b.Addr, "d"), chatBody("hello", 4)); got.status != http.StatusOK {
			t.Errorf("%s: status %d", b.Addr, got.status)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(r.URL + "/sim/stats"); err == nil {
		t.Error("still serving after Close")
	}
}
