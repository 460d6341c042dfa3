package calltypes

// AgentSteps is the number of steps of the task AgentMix describes.
const AgentSteps = 10

// Share is how many calls of one type a mix holds.
type Share struct {
	Type  string `json:"type"`
	Calls int    `json:"calls"`
}

// Mix is a workload's calls by type, in a fixed order.
type Mix []Share

// AgentMix is the calls of one browser task of AgentSteps steps, the unit
// every benchmark weighs the call types by: a plan at the start (1
// planning), then each step a pick of the next action and a check of what
// it did (10 click-pick, 10 yes-no), and the answer at the end (1
// summarize). The caps, prompts and schemas the calls are sent with are the
// types' own, from Default; the mix says only how many of each there are.
// It returns a fresh copy each time.
func AgentMix() Mix {
	return Mix{
		{Planning, 1},
		{ClickPick, AgentSteps},
		{YesNo, AgentSteps},
		{Summarize, 1},
	}
}

// Calls is the number of calls in the mix.
func (m Mix) Calls() int {
	n := 0
	for _, s := range m {
		n += s.Calls
	}
	return n
}
