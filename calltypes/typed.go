package calltypes

// Typed is a call type's name with the Go types of its input and answer,
// so that a call made through it is checked by the compiler: the input is
// an In, and the answer comes back as an Out with no type assertion.
// Register the type under the same name, with a parser whose value is an
// Out (JSONParser[Out] gives one).
type Typed[In, Out any] string

// Name is the registered name.
func (t Typed[In, Out]) Name() string { return string(t) }

// The built-in types, typed.
const (
	PlanCall    Typed[PlanInput, Plan]       = Planning
	PickCall    Typed[PickInput, Action]     = ClickPick
	CheckCall   Typed[CheckInput, Verdict]   = YesNo
	SummaryCall Typed[SummaryInput, Summary] = Summarize
)
