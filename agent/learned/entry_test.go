package learned_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headroom-agent/headroom/agent/learned"
)

func sampleEntry() *learned.Entry {
	return &learned.Entry{
		Format: learned.Format, Key: "pay-invoice-0123456789abcdef", Task: "pay-invoice",
		Template:  learned.Template{Goal: "Pay invoice {{invoice}}.", Start: "127.0.0.1/invoices", Params: []string{"invoice"}},
		LearnedAt: time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC),
		Goals: []learned.Goal{{Step: 0, Goal: "Pay invoice {{invoice}}.", PlanReserved: 1098, Steps: []learned.Step{{
			Action:   "click [3]",
			Target:   &learned.Target{Role: "button", Name: "Pay", Item: "{{invoice}} · Acme GmbH · 120 EUR", Nth: 1, Of: 4},
			Outcome:  learned.Outcome{Effect: learned.Navigated, Path: "/paid"},
			Reserved: 1332,
		}}}},
		SummaryReserved: 1347,
	}
}

func TestEntryRoundTrips(t *testing.T) {
	e := sampleEntry()
	data, err := learned.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := learned.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Steps() != 1 || back.Reserved() != 1098+1332+1347 || back.Goal(0) == nil || back.Goal(1) != nil {
		t.Errorf("decoded %+v", back)
	}
	if s := back.Goals[0].Steps[0].String(); s != `click the button "Pay" (1 of 4) in the item "{{invoice}} · Acme GmbH · 120 EUR", then navigated to /paid` {
		t.Errorf("step reads %q", s)
	}
}

func TestDecodeRefusesWhatIsNoEntry(t *testing.T) {
	good, _ := learned.Encode(sampleEntry())
	for name, data := range map[string]string{
		"not JSON":        "{",
		"unknown field":   strings.Replace(string(good), `"task"`, `"script": "rm -rf /", "task"`, 1),
		"other format":    strings.Replace(string(good), `"format": 1`, `"format": 2`, 1),
		"bad key":         strings.Replace(string(good), `"key": "pay-invoice-0123456789abcdef"`, `"key": "../x"`, 1),
		"not an action":   strings.Replace(string(good), `"click [3]"`, `"eval [3]"`, 1),
		"done is no step": strings.Replace(string(good), `"click [3]"`, `"done"`, 1),
		"bad outcome":     strings.Replace(string(good), `"navigated"`, `"teleported"`, 1),
		"no target":       strings.Replace(string(good), `"role": "button"`, `"role": ""`, 1),
		"control chars":   strings.Replace(string(good), `"Pay"`, `"Pay\u001b[2J"`, 1),
		"two entries":     string(good) + string(good),
		"too long":        `{"format":1,"key":"` + strings.Repeat("a", 2<<20) + `"}`,
	} {
		if _, err := learned.Decode([]byte(data)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := learned.Encode(sampleEntry())
	f.Add(good)
	withAnswer := sampleEntry()
	withAnswer.Answer = &learned.Answer{Parts: []learned.Part{{Words: "Invoice {{invoice}}: "}, {Line: &learned.Line{Under: "open invoices", At: 1, Items: 4, Shape: "{{invoice}} · # eur"}}}}
	answered, _ := learned.Encode(withAnswer)
	f.Add(answered)
	f.Add([]byte(`{"format":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := learned.Decode(data)
		if err != nil {
			return
		}
		again, err := learned.Encode(e)
		if err != nil {
			t.Fatalf("a decoded entry does not encode: %v", err)
		}
		if _, err := learned.Decode(again); err != nil {
			t.Fatalf("an encoded entry does not decode: %v", err)
		}
		for _, g := range e.Goals {
			for _, s := range g.Steps {
				_ = s.String()
			}
		}
		if e.Answer != nil {
			_ = e.Answer.String()
		}
	})
}

func TestLibrarySignsAndRefusesWhatItDidNotSign(t *testing.T) {
	ctx := context.Background()
	d := learned.NewMemory()
	signed := learned.NewLibrary(d, learned.Options{SignKey: []byte("fleet key")})
	e := sampleEntry()
	if err := signed.Save(ctx, e, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := signed.Load(ctx, e.Key); err != nil || got.Revision != 1 {
		t.Fatalf("load: %v, %+v", err, got)
	}
	other := learned.NewLibrary(d, learned.Options{SignKey: []byte("another key")})
	var m *learned.MissError
	if _, err := other.Load(ctx, e.Key); !errors.As(err, &m) || m.Reason != learned.MissUnsigned || m.Revision != 1 {
		t.Errorf("another key: %v", err)
	}
	data, _, _ := d.Get(ctx, e.Key)
	tampered := strings.Replace(string(data), "Acme GmbH", "Evil GmbH", 1)
	if err := d.Put(ctx, e.Key, 2, []byte(tampered)); err != nil {
		t.Fatal(err)
	}
	if _, err := signed.Load(ctx, e.Key); !errors.As(err, &m) || m.Reason != learned.MissUnsigned {
		t.Errorf("tampered: %v", err)
	}
	plain := learned.NewLibrary(learned.NewMemory(), learned.Options{})
	if err := plain.Save(ctx, e, 0); err != nil {
		t.Fatal(err)
	}
	// Another agent's first version, learned a second later: the first
	// stored wins. (The same bytes again are a retried write, and succeed.)
	later := sampleEntry()
	later.LearnedAt = later.LearnedAt.Add(time.Second)
	if err := plain.Save(ctx, later, 0); !errors.Is(err, learned.ErrConflict) {
		t.Errorf("a second first version: %v, want ErrConflict", err)
	}
	if s := plain.Stats(); s.Stored != 1 || s.Heals != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestWaitReturnsTheEntryOrTheLease(t *testing.T) {
	ctx := context.Background()
	lib := learned.NewLibrary(learned.NewMemory(), learned.Options{})
	key := sampleEntry().Key
	if ok, err := lib.Claim(ctx, key, "a", time.Minute); !ok || err != nil {
		t.Fatal(ok, err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		lib.Save(ctx, sampleEntry(), 0)
	}()
	if e, err := lib.Wait(ctx, key, "b", 5*time.Second, 10*time.Millisecond, time.Minute); err != nil || e == nil {
		t.Fatalf("wait for a's entry: %v", err)
	}
	other := sampleEntry()
	other.Key = "other-0123456789abcdef"
	if ok, _ := lib.Claim(ctx, other.Key, "a", time.Minute); !ok {
		t.Fatal("claim")
	}
	lib.Release(ctx, other.Key, "a")
	if e, err := lib.Wait(ctx, other.Key, "b", 5*time.Second, 10*time.Millisecond, time.Minute); e != nil || !errors.Is(err, learned.ErrNotFound) {
		t.Fatalf("a released: %v, %v", e, err)
	}
	if ok, _ := lib.Claim(ctx, other.Key, "c", time.Minute); ok {
		t.Error("b should hold the lease Wait took")
	}
}

// A run that stored the entry and gave the lease back between another's
// read and its claim leaves the entry: Lead returns it, and gives back
// the lease it took; on a key nobody stored, the lease is the caller's.
func TestLeadFindsTheEntryStoredBeforeItsClaim(t *testing.T) {
	ctx := context.Background()
	lib := learned.NewLibrary(learned.NewMemory(), learned.Options{})
	key := sampleEntry().Key
	if _, err := lib.Load(ctx, key); !errors.Is(err, learned.ErrNotFound) {
		t.Fatalf("b's read before a stored: %v", err)
	}
	if e, ok, err := lib.Lead(ctx, key, "a", time.Minute); e != nil || !ok || err != nil {
		t.Fatalf("a leads a key nobody stored: %v, %v, %v", e, ok, err)
	}
	if err := lib.Save(ctx, sampleEntry(), 0); err != nil {
		t.Fatal(err)
	}
	if err := lib.Release(ctx, key, "a"); err != nil {
		t.Fatal(err)
	}
	e, ok, err := lib.Lead(ctx, key, "b", time.Minute)
	if e == nil || ok || err != nil {
		t.Fatalf("b's claim after a stored and released: %v, %v, %v; want a's entry", e, ok, err)
	}
	if ok, _ := lib.Claim(ctx, key, "c", time.Minute); !ok {
		t.Error("b kept the lease it took to find the entry")
	}
}
