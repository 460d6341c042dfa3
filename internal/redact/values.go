package redact

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Secret values are secret wherever they stand, with no name beside them
// to say so: a deployment's key echoed in an error body, a token a page
// shows, a password typed into a field named "pw1". The process keeps one
// Set; Text replaces each of them in whatever it is given, so every
// output that passes through Text holds none, in whatever form a page or
// an encoding gave it (see fold).

const (
	// MinValue is the shortest value, counted once folded (its case,
	// spacing and invisible characters set aside), that is kept secret:
	// four characters, a PIN's length, the shortest credential in common
	// use. A shorter one ("1", "ab") would be found in ordinary words and
	// numbers wherever they stood, and removing it there would leave
	// outputs unreadable; a value this short is refused where it is
	// declared (Usable). Four characters are still found in other text
	// now and then ("4711" in a price); that is redaction erring on the
	// safe side.
	MinValue = 4
	// MinEcho is the shortest value of a secret-named parameter, or of a
	// cookie, that is also scrubbed where no name marks it: a shorter one
	// (a pin, a page number under a name like sid, a language code)
	// matches too much else.
	MinEcho = 8
	// fragmentLen is the shortest run of a key (Key) that is scrubbed on
	// its own, for a key a server echoes in pieces, when it holds a letter
	// and a digit; a key shorter than twice this is scrubbed whole only.
	fragmentLen = 8
	// maxValues bounds the set: a run has a few keys, sessions and
	// passwords, and a page that mints a new token per link must not grow
	// it, and the time each output takes, without end. Values past it are
	// still redacted by name, not scrubbed as text.
	maxValues = 512
	// maxRounds bounds the passes Replace makes: a value that begins with
	// the end of what replaced it ("ted]x" after "[redacted]") can make a
	// new match, which the next pass removes.
	maxRounds = 4
)

// Usable says why v cannot be kept secret, nil when it can: once folded
// it is shorter than MinValue, or it is part of the Marker or holds it
// (so that the mark would show it, or make it again).
func Usable(v string) error {
	f, mark := foldValue(v), foldValue(Marker)
	switch {
	case len(f) < MinValue:
		return fmt.Errorf("it is %d characters once case, spaces and invisible characters are set aside: a secret needs at least %d to be found in every output", len([]rune(f)), MinValue)
	case strings.Contains(mark, f), strings.Contains(f, mark):
		return errors.New("it is part of " + Marker + ", the mark that replaces secrets, or holds it")
	}
	return nil
}

// A Set holds values to find in text, in whatever form pages and
// encodings give them (see fold), each with what replaces it. The zero
// value is an empty set, ready to use; it is safe for concurrent use.
type Set struct {
	mu      sync.RWMutex
	entries []entry
	index   map[string]int // value → entries[i]
}

type entry struct {
	value, folded, with string
	// head and tail are how much of the value's start is the end of what
	// replaces it, and of its end the start ("ted]x" after "[redacted]"):
	// a match is extended over the repeats that would make it again.
	head, tail int
	// grams are the key's runs of fragmentLen folded bytes, for a key
	// scrubbed in pieces (AddKey); nil otherwise.
	grams map[string]bool
}

// Add makes v replaced by with wherever Replace finds it, and reports
// whether it did: a value Usable refuses, or one past the set's bound,
// is not added. Adding a value again changes what replaces it.
func (s *Set) Add(v, with string) bool { return s.add(v, with, false) }

// AddKey is Add for a key or token: one that is also found in pieces, each
// run of at least fragmentLen of its characters that holds a letter and
// a digit replaced on its own, as an error body that quotes half of it
// would show it.
func (s *Set) AddKey(v, with string) bool { return s.add(v, with, true) }

func (s *Set) add(v, with string, key bool) bool {
	if Usable(v) != nil {
		return false
	}
	e := entry{value: v, folded: foldValue(v), with: with}
	fw := foldValue(with)
	if strings.Contains(fw, e.folded) || strings.Contains(e.folded, fw) {
		return false
	}
	e.head, e.tail = overlap(fw, e.folded), overlap(e.folded, fw)
	if key && len(e.folded) >= 2*fragmentLen {
		e.grams = grams(e.folded)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[v]; ok {
		old := s.entries[i]
		if e.grams == nil {
			e.grams = old.grams
		}
		if old.with == e.with && (old.grams == nil) == (e.grams == nil) {
			return true
		}
		// Readers hold the slice without the lock: it is written anew,
		// never in place.
		entries := slices.Clone(s.entries)
		entries[i] = e
		s.entries = entries
		return true
	}
	if len(s.entries) >= maxValues {
		return false
	}
	if s.index == nil {
		s.index = map[string]int{}
	}
	s.index[v] = len(s.entries)
	s.entries = append(s.entries, e) // past every reader's length
	return true
}

// overlap is the length of the longest end of a that is also a start of
// b, shorter than both.
func overlap(a, b string) int {
	for k := min(len(a), len(b)) - 1; k > 0; k-- {
		if strings.HasSuffix(a, b[:k]) {
			return k
		}
	}
	return 0
}

// grams are the runs of fragmentLen bytes of a folded key that hold both
// a letter and a digit, as a random key's runs do: a run of words or of
// figures alone (the "embedded" of a key someone named) would be found in
// ordinary text. None inside the Marker: the mark must never match a
// piece of a key.
func grams(f string) map[string]bool {
	m := map[string]bool{}
	mark := foldValue(Marker)
	for i := 0; i+fragmentLen <= len(f); i++ {
		if g := f[i : i+fragmentLen]; mixed(g) && !strings.Contains(mark, g) {
			m[g] = true
		}
	}
	return m
}

// mixed reports whether s holds a letter and a digit.
func mixed(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0 && strings.IndexFunc(s, unicode.IsDigit) >= 0
}

// Len is how many values the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.entries)
}

// Has reports whether v is one of the set's values.
func (s *Set) Has(v string) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.index[v]
	return ok
}

// Replace returns text with every value of the set it holds replaced.
func (s *Set) Replace(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.RLock()
	entries := s.entries
	s.mu.RUnlock()
	if len(entries) == 0 {
		return text
	}
	for range maxRounds {
		spans := find(entries, text)
		if len(spans) == 0 {
			break
		}
		text = apply(text, spans)
	}
	return text
}

// Found returns the values of the set that text holds, in the set's
// order.
func (s *Set) Found(text string) []string {
	if s == nil || text == "" {
		return nil
	}
	s.mu.RLock()
	entries := s.entries
	s.mu.RUnlock()
	var out []string
	seen := map[string]bool{}
	for _, sp := range find(entries, text) {
		if !seen[sp.value] {
			seen[sp.value] = true
			out = append(out, sp.value)
		}
	}
	return out
}

// ReplaceAll is Replace over texts read as one, each ending where the
// next begins as a line ends, so that a value a page split across them (a
// character an element, a line each) is found across their ends. out[i]
// is texts[i] with what it held of a value replaced, the replacement
// standing where the value began; held[i] are the values texts[i] held
// all or part of, in the set's order.
func (s *Set) ReplaceAll(texts []string) (out []string, held [][]string) {
	out, held = slices.Clone(texts), make([][]string, len(texts))
	if s == nil || len(texts) == 0 {
		return out, held
	}
	s.mu.RLock()
	entries := s.entries
	s.mu.RUnlock()
	if len(entries) == 0 {
		return out, held
	}
	starts := make([]int, len(texts)+1) // texts[i] is joined[starts[i]:starts[i+1]-1]
	for i, t := range texts {
		starts[i+1] = starts[i] + len(t) + 1
	}
	spans := find(entries, strings.Join(texts, "\n"))
	for i := range texts {
		from, to := starts[i], starts[i+1]-1
		var b strings.Builder
		last := from
		for _, sp := range spans {
			if sp.end <= from || sp.start >= to {
				continue
			}
			if !slices.Contains(held[i], sp.value) {
				held[i] = append(held[i], sp.value)
			}
			b.WriteString(texts[i][last-from : max(last, sp.start)-from])
			if sp.start >= from {
				b.WriteString(sp.with)
			}
			last = min(to, sp.end)
		}
		if len(held[i]) == 0 {
			continue
		}
		b.WriteString(texts[i][last-from:])
		out[i] = s.Replace(b.String())
	}
	return out, held
}

// span is a run of source bytes that holds a value, and what replaces
// it.
type span struct {
	start, end  int
	with, value string
}

// find returns where text holds the entries' values, as source spans in
// order, those that overlap merged.
func find(entries []entry, text string) []span {
	spans := findIn(fold(text), entries, nil)
	if hasEscapes(text) {
		spans = findIn(foldLiteral(text), entries, spans)
	}
	return merge(spans)
}

// findIn appends to spans where the folded text f holds the entries'
// values.
func findIn(f folded, entries []entry, spans []span) []span {
	fs := string(f.b)
	at := func(a, b int, e entry) {
		spans = append(spans, span{int(f.start[a]), int(f.end[b-1]), e.with, e.value})
	}
	for _, e := range entries {
		for from := 0; from+len(e.folded) <= len(fs); {
			i := strings.Index(fs[from:], e.folded)
			if i < 0 {
				break
			}
			a, b := e.extend(fs, from+i, from+i+len(e.folded))
			at(a, b, e)
			from += i + 1
		}
		if e.grams != nil {
			for i := 0; i+fragmentLen <= len(fs); i++ {
				if !e.grams[fs[i:i+fragmentLen]] {
					continue
				}
				j := i + fragmentLen
				for j < len(fs) && strings.Contains(e.folded, fs[i:j+1]) {
					j++
				}
				at(i, j, e)
				i = j - 1
			}
		}
	}
	return spans
}

// extend widens the match fs[a:b] of e over what would match e again
// once it is replaced: the rest of the value after it, again and again,
// where the value begins with the end of its replacement, and the first
// part before it where it ends with its start.
func (e entry) extend(fs string, a, b int) (int, int) {
	if e.head > 0 {
		for rest := e.folded[e.head:]; strings.HasPrefix(fs[b:], rest); {
			b += len(rest)
		}
	}
	if e.tail > 0 {
		for first := e.folded[:len(e.folded)-e.tail]; strings.HasSuffix(fs[:a], first); {
			a -= len(first)
		}
	}
	return a, b
}

// merge sorts spans and joins those that overlap; a joined span is
// replaced by what replaces its longest part.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.start < last.end {
			if sp.end-sp.start > last.end-last.start {
				last.with, last.value = sp.with, sp.value
			}
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// apply replaces spans, in order and not overlapping, in text.
func apply(text string, spans []span) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(text[last:sp.start])
		b.WriteString(sp.with)
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// process is the process's secret values, each replaced by the Marker.
var process Set

// Secret makes values secret for the rest of the process: Text replaces
// each of them wherever it stands, in any form a page or an encoding
// gives it. A value Usable refuses is ignored.
func Secret(vs ...string) {
	for _, v := range vs {
		process.Add(v, Marker)
	}
}

// Key is Secret for a credential (an API key, a token, a password to a
// store): it is also found in pieces, each run of at least eight of its
// characters that holds a letter and a digit (of a key at least sixteen
// long) replaced on its own.
func Key(vs ...string) {
	for _, v := range vs {
		process.AddKey(v, Marker)
	}
}

// scrubValues replaces every secret value in s.
func scrubValues(s string) string { return process.Replace(s) }
