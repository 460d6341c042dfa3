package safefile

import "fmt"

// CheckJSONDepth refuses JSON nested deeper than max arrays and objects,
// from the bytes alone (strings are skipped, escapes included), before a
// decoder builds anything. It reports the line of the first byte too
// deep. Malformed JSON that is not too deep passes: the decoder reports it.
func CheckJSONDepth(data []byte, max int) error {
	depth, line, inString, escaped := 0, 1, false, false
	for _, c := range data {
		if c == '\n' {
			line++
		}
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > max {
				return fmt.Errorf("line %d: nested more than %d levels deep", line, max)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
