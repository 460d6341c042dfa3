package llm

import (
	"errors"
	"fmt"

	"github.com/headroom-agent/headroom/budget"
	"github.com/headroom-agent/headroom/calltypes"
)

// ErrOverBudget is wrapped by the error of a call stopped by its
// allowance.
var ErrOverBudget = errors.New("llm: the call would reserve more than its allowance")

// OverBudgetError is a request that was not sent because it would have
// reserved more than the call's allowance left.
type OverBudgetError struct {
	Type string
	Need int64 // what the request would reserve
	Left int64 // what the allowance had left
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("llm: a %s request would reserve %d tokens and only %d are left of the allowance: raise the token budget, or lower the type's max_tokens", e.Type, e.Need, e.Left)
}

func (e *OverBudgetError) Unwrap() error { return ErrOverBudget }

// reserve prices req, once, by the rule Azure charges it at (Estimate),
// and returns the budget call that places it: its cost, class, session
// and pool. A request that would take the call past its allowance (with
// reserved already charged by its other requests) is refused here, before
// the budget or the model sees it.
func reserve(req *request, o CallOptions, reserved int64) (budget.Call, error) {
	cost := Estimate(req.msgs, req.cap, req.n()) + req.imageTokens()
	if left := o.Allowance - reserved; o.Allowance > 0 && cost > left {
		return budget.Call{}, &OverBudgetError{Type: req.t.Name, Need: cost, Left: max(0, left)}
	}
	class := budget.Interactive
	if req.t.Priority == calltypes.Background {
		class = budget.Background
	}
	return budget.Call{Tokens: cost, Class: class, Session: o.Session, Pool: req.pool}, nil
}
