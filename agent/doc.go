// Package agent runs browser tasks: it turns what the browser sees into
// what a model call may carry, and (as it grows) the step loop that plans,
// picks, acts, verifies and summarizes. It knows the browser and the
// caller's interfaces, never Azure or Redis.
package agent
