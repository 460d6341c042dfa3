package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/headroom-agent/headroom/budget/metrics"
)

// A sink that fails once it runs is said on stderr, not dropped: here the
// last EMF flush, whose source cannot be read.
func TestMetricsSinksSayWhatFailed(t *testing.T) {
	var stderr bytes.Buffer
	m := metricsFlags{emf: "-", stderr: &stderr}
	stop, err := m.start(func(context.Context) (metrics.View, error) {
		return metrics.View{}, errors.New("the store went away")
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if got := stderr.String(); !strings.Contains(got, "--emf: metrics: the store went away") {
		t.Errorf("stderr %q, want the failed flush said", got)
	}
}
