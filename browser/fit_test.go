package browser

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func fitSnapshot() *Snapshot {
	s := &Snapshot{URL: "http://shop.test/", Title: "Shop", Text: "one two three\nfour five\n\nsix" + strings.Repeat(" and more", 20), page: new(Page)}
	for i := range 6 {
		s.Elements = append(s.Elements, Element{Index: i, Role: "link", Tag: "a", Name: fmt.Sprintf("item %d", i)})
	}
	return s
}

// asJSON is another rendering Fit can bound, as a caller outside this
// package would.
func asJSON(s *Snapshot, c Cut) int {
	b, _ := json.Marshal(struct {
		Elements []Element `json:"elements"`
		Text     string    `json:"text"`
		Cut      string    `json:"cut,omitempty"`
	}{s.Elements, s.Text, c.String()})
	return len(b)
}

func TestFitCutsTextThenElements(t *testing.T) {
	s := fitSnapshot()
	full := asJSON(s, Cut{})
	c, cut := s.Fit(func(c *Snapshot, cut Cut) bool { return asJSON(c, cut) <= full })
	if cut != (Cut{}) || cut.String() != "" || c.Text != s.Text || len(c.Elements) != 6 {
		t.Errorf("what fits is cut: %+v, %q", cut, c.Text)
	}

	threeWords := asJSON(&Snapshot{Elements: s.Elements, Text: "one two three"}, Cut{Words: 43})
	c, cut = s.Fit(func(c *Snapshot, cut Cut) bool { return asJSON(c, cut) <= threeWords })
	if cut != (Cut{Words: 43}) || c.Text != "one two three" || len(c.Elements) != 6 {
		t.Errorf("text should go first, word by word: %+v, %q", cut, c.Text)
	}
	c, cut = s.Fit(func(c *Snapshot, cut Cut) bool { return len(strings.Fields(c.Text)) <= 4 })
	if c.Text != "one two three\nfour" || cut.Words != 42 {
		t.Errorf("the cut keeps line breaks: %q", c.Text)
	}

	c, cut = s.Fit(func(c *Snapshot, cut Cut) bool { return len(c.Elements) <= 2 && c.Text == "" })
	if cut != (Cut{Elements: 4, Words: 46}) || len(c.Elements) != 2 || c.Elements[1].Name != "item 1" {
		t.Errorf("elements should go from the end: %+v, %v", cut, c.Elements)
	}
	if want := "[truncated: 4 more elements, 46 more words of text; scroll or extract to see more]"; cut.String() != want {
		t.Errorf("marker %q", cut.String())
	}
	if c.page != s.page {
		t.Error("the copy should resolve its indexes on the same page")
	}
	c.Elements[0].Name = "changed"
	_ = append(c.Elements, Element{Name: "appended"})
	if s.Elements[0].Name != "item 0" || s.Elements[2].Name != "item 2" {
		t.Error("changing the copy changed the snapshot")
	}

	c, cut = s.Fit(func(*Snapshot, Cut) bool { return false })
	if len(c.Elements) != 0 || c.Text != "" || cut != (Cut{Elements: 6, Words: 46}) {
		t.Errorf("when nothing fits, the bare copy: %+v", cut)
	}
}
