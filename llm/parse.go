package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
// parser's value of it.
type parsed struct {
	text  string
	value any
}

// parse reads text, the answer to req, with the type's parser. An answer
// that does not parse gets one repair request (the model sees its answer
// and what is wrong with it); one still invalid after it is an
// *InvalidOutputError. Repairs and failures are counted, and apart for
// the fallback pool's calls.
func (c *Caller) parse(ctx context.Context, req *request, text string, o CallOptions, rep *Report) (parsed, error) {
	v, err := req.t.Parse(text)
	if err == nil {
		return parsed{text, v}, nil
	}
	rep.Retries++
	text, err = c.exchange(ctx, req.repair(text, err), o, rep)
	if err != nil {
		return parsed{}, err
	}
	v, err = req.t.Parse(text)
	fallback := rep.Fallback
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
		return parsed{}, &InvalidOutputError{Type: req.t.Name, Text: text, Err: err}
	}
	return parsed{text, v}, nil
}

// json is the answer as JSON: the model's text, which the parser took,
// compacted; or the parser's value, when the parser takes text that is
// not JSON.
func (p parsed) json() (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(p.text)); err == nil {
		return buf.Bytes(), nil
	}
	return json.Marshal(p.value)
}
