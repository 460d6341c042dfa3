package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/llm"
	"github.com/headroom-agent/headroom/llm/azuresim"
	"github.com/headroom-agent/headroom/llm/azuresim/heuristic"
	"github.com/headroom-agent/headroom/llm/embedded"
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

// ExtractTable is the extract-table type's typed name: its input and the
// Go type of its answer.
const ExtractTable calltypes.Typed[calltypes.SummaryInput, Table] = "extract-table"

// Adding a call type: its cap, schema, prompt and priority, registered
// once; every call of the type is then sent with that cap and n = 1,
// reserved against the budget and parsed into its Go value. A type known
// only by name (a config's) is called with JSON and answers JSON.
func Example_extractTable() {
	types := calltypes.Default()
	err := types.Register(calltypes.Type{
		Name:      ExtractTable.Name(),
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
	caller, err := embedded.OpenModel(context.Background(), tableModel{}, llm.Options{Types: types})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer caller.Close()
	input := calltypes.SummaryInput{Goal: "list the shoes and their prices", Page: calltypes.MustParsePage(`url: https://shop.example/search?q=trail
title: Trail shoes
Trail Runner 4 GTX, 89 EUR.
Speedgoat 5, 96 EUR.`)}
	table, rep, err := llm.Call(context.Background(), caller, ExtractTable, input, llm.CallOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Type, rep.MaxTokens, rep.N)
	fmt.Println(table.Rows)

	raw, _, err := caller.Call(context.Background(), "extract-table", json.RawMessage(`{"goal":"list the shoes","page":"url: https://shop.example/\ntitle: Shoes\nSpeedgoat 5, 96 EUR."}`), llm.CallOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(raw))
	// Output:
	// extract-table 400 1
	// [[Trail Runner 4 GTX 89 EUR] [Speedgoat 5 96 EUR]]
	// {"rows":[["Trail Runner 4 GTX","89 EUR"],["Speedgoat 5","96 EUR"]]}
}

// A built-in call through its typed name: the input is checked by the
// compiler and the answer comes back as a calltypes.Action, with what the
// call cost beside it.
func ExampleCall() {
	caller, err := embedded.Open(context.Background(), llm.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer caller.Close()
	in := calltypes.PickInput{
		Goal: `search for "walnut desk"`,
		Page: calltypes.MustParsePage(`url: https://shop.example/
title: Shop
[0] searchbox "Search"
[1] button "Go"`),
	}
	action, rep, err := llm.Call(context.Background(), caller, calltypes.PickCall, in, llm.CallOptions{Session: "task-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(action)
	fmt.Println(rep.Type, rep.MaxTokens, rep.N, rep.TokensReserved > rep.TokensUsed)
	// Output:
	// type [0] "walnut desk"
	// click-pick 192 1 true
}
