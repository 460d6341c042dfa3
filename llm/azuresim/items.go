package azuresim

import (
	"strings"
	"sync"

	"github.com/headroom-agent/headroom/llm/tokens"
)

// itemStore keeps what a resource stored for the Responses API: each
// response's conversation and each output item, by id. It forgets the
// oldest entries past its size, as a long load test would otherwise grow
// without bound.
type itemStore struct {
	mu    sync.Mutex
	max   int
	convs map[string][]tokens.Message
	order []string
}

func newItemStore(max int) *itemStore {
	return &itemStore{max: max, convs: map[string][]tokens.Message{}}
}

func (s *itemStore) put(id string, conv []tokens.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.convs[id]; !ok {
		s.order = append(s.order, id)
	}
	s.convs[id] = conv
	for len(s.order) > s.max {
		delete(s.convs, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *itemStore) get(id string) ([]tokens.Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	return c, ok
}

// mintedBy returns the tag of the resource that minted id, or "" when id is
// not in the form this simulator mints (prefix_TAG_random).
func mintedBy(id string) string {
	parts := strings.Split(id, "_")
	if len(parts) != 3 || len(parts[1]) != 8 {
		return ""
	}
	return parts[1]
}
