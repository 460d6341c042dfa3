// Package plural writes counts in messages: "1 client", "2 clients".
package plural

import "strconv"

// Of is n and the noun, plural unless n is 1: Of(1, "request") is
// "1 request", Of(3, "request") is "3 requests". Nouns whose plural is
// not an added s give it after a slash: Of(2, "process/processes").
func Of(n int, noun string) string {
	one, many := noun, noun+"s"
	for i := range noun {
		if noun[i] == '/' {
			one, many = noun[:i], noun[i+1:]
			break
		}
	}
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
