package plural

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "client", "0 clients"},
		{1, "client", "1 client"},
		{2, "client", "2 clients"},
		{1, "process/processes", "1 process"},
		{200, "process/processes", "200 processes"},
		{-1, "request", "-1 requests"},
	} {
		if got := Of(c.n, c.noun); got != c.want {
			t.Errorf("Of(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
