package tokens

import (
	"strings"
	"testing"
)

// The published counting recipe's six-message example costs 124 prompt
// tokens on gpt-4o; the same count here shows the overhead constants are right.
func TestChatMatchesPublishedExample(t *testing.T) {
	msgs := []Message{
		{Role: "system", Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
		{Role: "system", Name: "example_user", Content: "New synergies will help drive top-line growth."},
		{Role: "system", Name: "example_assistant", Content: "Things working well together will increase revenue."},
		{Role: "system", Name: "example_user", Content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
		{Role: "system", Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
		{Role: "user", Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
	}
	if got := Chat(msgs); got != 124 {
		t.Fatalf("Chat = %d, want 124", got)
	}
}

func TestTruncate(t *testing.T) {
	s := strings.Repeat("alpha beta gamma ", 20)
	cut, was := Truncate(s, 5)
	if !was || Count(cut) > 5 || !strings.HasPrefix(s, cut) {
		t.Fatalf("Truncate(…, 5) = %q, %v", cut, was)
	}
	same, was := Truncate("hello", 5)
	if was || same != "hello" {
		t.Fatalf("Truncate(hello, 5) = %q, %v", same, was)
	}
	if Count("") != 0 {
		t.Fatal("empty string has tokens")
	}
}
