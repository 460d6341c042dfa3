package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
)

// Table is the answer of the extract-table type.
type Table struct {
	Rows [][]string `json:"rows"`
}

// tableModel stands in for a model on extract-table calls, offline; the
// simulator's heuristic answers the built-ins.
type tableModel struct{ heuristic.Model }

func (m tableModel) Reply(r azuresim.Request) string {
	if strings.Contains(string(r.ResponseFormat), `"extract-table"`) {
		return `{"rows":[["Trail Runner 4 GTX","89 EUR"],["Speedgoat 5","96 EUR"]]}`
	}
	return m.Model.Reply(r)
}

// Adding a call type: its cap, schema, prompt and priority, registered
// once; every call of the type is then sent with that cap and n = 1,
// reserved against the budget and parsed into its Go value.
func Example_extractTable() {
	types := calltypes.Default()
	err := types.Register(calltypes.Type{
		Name:      "extract-table",
		MaxTokens: 400, // a few rows of a few cells
		Priority:  calltypes.Background,
		System:    "The user message is JSON describing a web page and a goal. Extract the table the goal asks for as rows of cells.",
		Schema: map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"rows"},
			"properties": map[string]any{"rows": map[string]any{
				"type": "array", "items": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			}},
		},
		Parse: calltypes.JSONParser(func(t Table) error {
			if len(t.Rows) == 0 {
				return errors.New("rows is empty: give at least one row")
			}
			return nil
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := llm.OpenEmbeddedModel(context.Background(), tableModel{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	caller := &llm.Caller{Types: types, Dispatcher: b.Dispatcher}
	input := calltypes.SummaryInput{Goal: "list the shoes and their prices", Page: calltypes.Page{
		URL: "https://shop.example/search?q=trail", Text: "Trail Runner 4 GTX, 89 EUR. Speedgoat 5, 96 EUR.",
	}}
	rec, err := caller.Call(context.Background(), "extract-table", input, llm.CallOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Type, rec.MaxTokens, rec.N, rec.Deployment)
	fmt.Println(rec.Output.(Table).Rows)
	// Output:
	// extract-table 400 1 gpt-4o-mini
	// [[Trail Runner 4 GTX 89 EUR] [Speedgoat 5 96 EUR]]
}
