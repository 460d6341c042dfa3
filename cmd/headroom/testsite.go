package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/headroom-agent/headroom/agent"
	"github.com/headroom-agent/headroom/internal/testsite"
)

// testsiteAddr is where testdata/pages was recorded: served there, a live
// page has the URL its recording has.
const testsiteAddr = "127.0.0.1:8391"

// runTestsite serves the test sites, so record, observe and run
// --record-har can be tried by hand on pages the tests know.
func runTestsite(fs *pflag.FlagSet) runner {
	addr := fs.String("addr", testsiteAddr, "address to listen on (the recordings in testdata/pages were made at the default)")
	dir := fs.String("dir", filepath.Join("testdata", "pages"), "the sites' `directory` (run from the repository's root for the default)")
	return func(ctx context.Context, _ []string, _, stderr io.Writer) int {
		sites, err := siteNames(*dir)
		if err != nil {
			return failed(ctx, stderr, "testsite", agent.Usage(fmt.Errorf("--dir: %v: run it from the repository's root, or name the pages with --dir", err)))
		}
		l, err := net.Listen("tcp", *addr)
		if err != nil {
			return failed(ctx, stderr, "testsite", err)
		}
		srv := &http.Server{Handler: testsite.HandlerOf(*dir), ReadHeaderTimeout: 10 * time.Second}
		base := "http://" + l.Addr().String()
		fprintf(stderr, "headroom testsite: serving %s on %s:\n", *dir, base)
		for _, s := range sites {
			fprintf(stderr, "\t%s/%s/\n", base, s)
		}
		fprintf(stderr, "try: headroom record %s/shop/ --out shop.har\n", base)
		go func() {
			<-ctx.Done()
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shut)
		}()
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return failed(ctx, stderr, "testsite", err)
		}
		fprintf(stderr, "headroom testsite: stopped\n")
		return exitOK
	}
}

// siteNames are the directories of dir with an index.html: the sites.
func siteNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "index.html")); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, errors.New(dir + " holds no site (a directory with an index.html)")
	}
	return names, nil
}
