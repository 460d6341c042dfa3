package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/headroom-agent/headroom/internal/hostile"
)

// TestHostileCorpusThroughTheCommands takes every page of the hostile
// corpus through observe, record and observe --replay, and three of them
// through run, live and replayed, confined to the inside host: the
// outside host sees no connection and no request. A page that tries to
// leave may end its command with the browser's code (4), naming the
// allowed domains; nothing else may fail.
func TestHostileCorpusThroughTheCommands(t *testing.T) {
	t.Parallel()
	c, err := hostile.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pages, err := hostile.Pages()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	allow := []string{"--allow", hostile.InsideHost}

	check := func(what string, r ran) {
		t.Helper()
		switch {
		case r.code == 0:
		case r.code == exitBrowser && strings.Contains(r.stderr, "outside the run's allowed domains"):
		default:
			t.Errorf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
	}
	parallel := func(f func(page string)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 4)
		for _, page := range pages {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				f(page)
			}()
		}
		wg.Wait()
	}
	var mu sync.Mutex
	refused := 0
	count := func(r ran) {
		if strings.Contains(r.stderr, "refused ") {
			mu.Lock()
			refused++
			mu.Unlock()
		}
	}

	parallel(func(page string) {
		r := runBinary(t, nil, append([]string{"observe", c.URL(page)}, allow...)...)
		check("observe "+page, r)
		count(r)
	})
	parallel(func(page string) {
		har := filepath.Join(dir, page+".har")
		r := runBinary(t, nil, append([]string{"record", c.URL(page), "--out", har}, allow...)...)
		check("record "+page, r)
		if _, err := os.Stat(har); err != nil {
			return // a page that left before it loaded recorded nothing
		}
		check("observe --replay "+page, runBinary(t, nil, append([]string{"observe", c.URL(page), "--har", har}, allow...)...))
	})

	for _, page := range []string{"blank-tab.html", "popup.html", "webrtc.html"} {
		task := fmt.Sprintf("name: hostile-%s\nstart_url: %s\ngoal: Open the partner page and say what it shows.\nmax_steps: 3\nallowed_domains: [%s]\n",
			strings.TrimSuffix(page, ".html"), c.URL(page), hostile.InsideHost)
		live := writeFile(t, dir, page+".task.yaml", task)
		har := filepath.Join(dir, page+".run.har")
		r := runBinary(t, nil, "run", live, "--record-har", har)
		if r.code == -1 || r.code == exitUsage || r.code == exitBrowser {
			t.Errorf("run %s: exit %d\n%s", page, r.code, r.stderr)
		}
		res := decodeResult(t, "run "+page, []byte(r.stdout))
		if len(res.ClosedTabs) == 0 && page != "webrtc.html" {
			t.Errorf("run %s: no closed tab reported: %+v", page, res)
		}
		replayed := writeFile(t, dir, page+".replay.yaml", task+"replay: "+har+"\n")
		r = runBinary(t, nil, "run", replayed)
		if r.code == -1 || r.code == exitUsage || r.code == exitBrowser {
			t.Errorf("run %s replayed: exit %d\n%s", page, r.code, r.stderr)
		}
	}

	conns, reqs, datagrams := c.Reached()
	if conns != 0 || len(reqs) != 0 || datagrams != 0 {
		t.Errorf("the outside host saw %d connections, %d requests and %d UDP datagrams: %v", conns, len(reqs), datagrams, reqs)
	}
	if refused < len(pages)*3/4 {
		t.Errorf("observe reported refusals for %d of %d pages", refused, len(pages))
	}
	t.Logf("%d hostile pages through observe, record, replay; 3 through run live and replayed: %d connections, %d requests and %d datagrams reached the outside host",
		len(pages), conns, len(reqs), datagrams)
}
