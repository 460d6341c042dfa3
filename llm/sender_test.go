package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// builtinsAndTiny answers the built-ins as the heuristic does, and the
// tiny type as flaky does: garbage first, so that a repair follows.
type builtinsAndTiny struct{ tiny *flaky }

func (m builtinsAndTiny) Reply(r azuresim.Request) string {
	if strings.Contains(string(r.ResponseFormat), `"name":"tiny"`) {
		return m.tiny.Reply(r)
	}
	return heuristic.Model{}.Reply(r)
}

// The same calls sent live, live and recorded, and replayed from that
// recording, with no dispatcher, give the same answers, the same reports
// (but for the latency a live request takes) and the same counts: the
// caller cannot tell its senders apart. The repair a tiny call needs
// travels through each of them too.
func TestTheSendersAreInterchangeable(t *testing.T) {
	newLive := func() *Caller {
		sc := newSimCaller(t, "mixed", map[string]azuresim.Model{"mixed": builtinsAndTiny{&flaky{}}})
		if err := sc.Types.Register(tinyType(64)); err != nil {
			t.Fatal(err)
		}
		return sc.Caller
	}
	direct := newLive()
	recorder := newLive()
	var tape bytes.Buffer
	recorder.Cassette = NewCassette(&tape, recorder.Dispatcher.Secrets()...)

	type result struct {
		Out    json.RawMessage
		Report Report
	}
	run := func(c *Caller) []result {
		t.Helper()
		var got []result
		for _, typ := range []string{calltypes.Planning, calltypes.ClickPick, calltypes.YesNo, calltypes.Summarize, "tiny"} {
			in := inputs[typ]
			if typ == "tiny" {
				in = goalOnly{Goal: "g"}
			}
			out, rep, err := c.Call(context.Background(), typ, asJSON(in), CallOptions{Session: "s"})
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			got = append(got, result{out, rep})
		}
		// The typed way in, over the same senders.
		g, rep, err := Call(context.Background(), c, tinyCall, goalOnly{Goal: "g"}, CallOptions{})
		if err != nil {
			t.Fatalf("typed tiny: %v", err)
		}
		return append(got, result{asJSON(g), rep})
	}
	fromLive, recorded := run(direct), run(recorder)

	cas, err := LoadCassette(bytes.NewReader(tape.Bytes()), "tape.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	cas.RecordTo(&again)
	replayer := &Caller{Types: calltypes.Default(), Cassette: cas}
	if err := replayer.Types.Register(tinyType(64)); err != nil {
		t.Fatal(err)
	}
	replayed := run(replayer)

	for _, c := range []struct {
		caller *Caller
		want   sender
		what   string
	}{
		{direct, live{}, "a dispatcher alone"},
		{recorder, recording{}, "a dispatcher and a cassette"},
		{replayer, replaying{}, "a recording"},
	} {
		got, err := c.caller.sender()
		if err != nil || fmt.Sprintf("%T", got) != fmt.Sprintf("%T", c.want) {
			t.Errorf("a caller with %s sends with %T (%v), want %T", c.what, got, err, c.want)
		}
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i := range recorded {
		// What was recorded comes back as it was, latency and all.
		if a, b := js(replayed[i]), js(recorded[i]); a != b {
			t.Errorf("call %d replayed %s, recorded %s", i, a, b)
		}
		l, r := fromLive[i], recorded[i]
		l.Report, r.Report = l.Report.timeless(), r.Report.timeless()
		if a, b := js(l), js(r); a != b {
			t.Errorf("call %d live %s, recorded %s", i, a, b)
		}
	}
	if last := recorded[len(recorded)-1]; last.Report.Retries != 1 || !strings.Contains(string(last.Out), `"fixed"`) {
		t.Errorf("the typed tiny call: %+v, want one repair", last)
	}
	if s, r, l := js(replayer.Stats()), js(recorder.Stats()), js(direct.Stats()); s != r || r != l {
		t.Errorf("stats differ:\nreplayed %s\nrecorded %s\nlive     %s", s, r, l)
	}
	if st := replayer.Stats()["tiny"]; st.Calls != 2 || st.Repaired != 2 {
		t.Errorf("tiny stats %+v, want two calls, each repaired", st)
	}
	if n := strings.Count(tape.String(), "\n"); n != 8 || !bytes.Equal(again.Bytes(), tape.Bytes()) {
		t.Errorf("the tape has %d exchanges (want 8: four built-ins, two tiny calls and their repairs), and replaying it recorded again gives\n%s\nwant\n%s", n, again.String(), tape.String())
	}
}

// timeless is r without what differs between two runs of the same call:
// its latency, when it was admitted and sent, and its send-by.
func (r Report) timeless() Report {
	r.LatencyMS, r.AdmittedAt, r.SentAt, r.SendBy = 0, time.Time{}, time.Time{}, time.Time{}
	return r
}
