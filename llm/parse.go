package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/headroom-agent/headroom/calltypes"
)

// InvalidOutputError is an answer that did not parse, even after one
// repair request.
type InvalidOutputError struct {
	Type string
	Text string // the last answer, as the model gave it
	Err  error
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("llm: the %s answer is not valid after a repair request: %v", e.Type, e.Err)
}

func (e *InvalidOutputError) Unwrap() error { return e.Err }

// parsed is an answer the type's parser took: the model's text, and the
// parser's value of it; or, when the parser refused it and the type's
// Mend took it, the value mended and its fixes.
type parsed struct {
	text   string
	value  any
	mended bool
	mends  []string
}

// parse reads text, the answer to req, with the type's parser, or as
// mended when the parser refuses a slip the type can fix without
// guessing. An answer neither takes gets one repair request (the model
// sees its answer and what is wrong with it); one still invalid after it
// is an *InvalidOutputError. Mends, repairs and failures are counted,
// and apart for the fallback pool's calls.
func (c *Caller) parse(ctx context.Context, req *request, text string, o CallOptions, rep *Report) (parsed, error) {
	fallback := rep.Fallback
	p, err := read(req.t, text)
	if err == nil {
		if p.mended {
			rep.Mends = p.mends
			c.count(req.t.Name, func(s *TypeStats) {
				s.Mended++
				if fallback {
					s.FallbackMended++
				}
			})
		}
		return p, nil
	}
	rep.Retries++
	text, err = c.exchange(ctx, req.repair(text, err), o, rep)
	if err != nil {
		return parsed{}, err
	}
	p, err = read(req.t, text)
	c.count(req.t.Name, func(s *TypeStats) {
		switch {
		case err != nil:
			s.Invalid++
			if fallback {
				s.FallbackInvalid++
			}
		default:
			s.Repaired++
			if fallback {
				s.FallbackRepaired++
			}
		}
	})
	if err != nil {
		rep.Invalid = true
		return parsed{}, &InvalidOutputError{Type: req.t.Name, Text: text, Err: err}
	}
	rep.Repaired, rep.Mends = true, p.mends
	return p, nil
}

// read takes text with t's parser; when that refuses it and t can mend,
// with t's Mend, whose error is then what is still wrong once the slips
// are fixed.
func read(t calltypes.Type, text string) (parsed, error) {
	v, err := t.Parse(text)
	if err == nil || t.Mend == nil {
		return parsed{text: text, value: v}, err
	}
	v, mends, err := t.Mend(text)
	if err != nil {
		return parsed{}, err
	}
	if len(mends) == 0 {
		// A Mend that fixed what Parse refused and did not say so.
		mends = []string{"mended by the " + t.Name + " type's Mend"}
	}
	return parsed{text: text, value: v, mended: true, mends: mends}, nil
}

// json is the answer as JSON: the model's text, which the parser took,
// compacted; or the parser's value, when the parser takes text that is
// not JSON or the answer was mended.
func (p parsed) json() (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(p.text)); err == nil && !p.mended {
		return buf.Bytes(), nil
	}
	return json.Marshal(p.value)
}
