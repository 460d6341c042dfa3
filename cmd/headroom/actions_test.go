package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestActionsListsWhatTheModelIsTold(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"actions", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []struct{ Name, Element, Text, Describe string }
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "click type select scroll navigate press hover back wait upload tab close-tab done" {
		t.Errorf("actions: %s", got)
	}
	out.Reset()
	if code := run(context.Background(), []string{"actions"}, &out, &errb); code != exitOK || !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "upload required required the input's files upload a file the task declares") {
		t.Errorf("exit %d, table:\n%s", code, out.String())
	}
}
