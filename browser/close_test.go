package browser

import (
	"os"
	"testing"
)

// A closed Page leaves nothing in $TMPDIR: not its profile, and not the
// directory Chrome keeps its singleton socket in, which Chrome itself
// leaves behind when it is stopped. A container's /tmp is small and lives
// as long as the container.
func TestCloseLeavesNothingInTmpdir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := site(t)
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}})
	if _, err := p.Navigate(ctxT(t), srv.URL+"/shop/"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) == 0 {
		t.Fatal("Chrome keeps nothing in $TMPDIR while it runs: this test proves nothing")
	}
	if err := p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in $TMPDIR after Close: %s", e.Name())
	}
}
