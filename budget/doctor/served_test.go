package doctor

import "testing"

// Azure names the model and its version in an answer's model field; the
// simulator does the same, or gives the bare name when it has no version.
func TestDoctorReadsServedModelNames(t *testing.T) {
	for _, c := range []struct {
		model, version, reported string
		same                     bool
		served, want             string
	}{
		{"gpt-4o", "2024-11-20", "gpt-4o-2024-11-20", true, "2024-11-20", "2024-11-20"},
		{"gpt-4o", "2024-11-20", "gpt-4o-2024-08-06", true, "2024-08-06", "2024-11-20"},
		{"gpt-4o", "", "gpt-4o-2024-08-06", true, "2024-08-06", ""},
		{"gpt-4o", "2024-11-20", "gpt-4o", true, "", "2024-11-20"}, // the simulator without a version
		{"gpt-4o", "2024-11-20", "gpt-4o-mini-2024-07-18", false, "", "2024-11-20"},
		{"GPT-4o", "2024-11-20", "gpt-4o-2024-11-20", true, "2024-11-20", "2024-11-20"},
		{"gpt-4o-2024-11-20", "", "gpt-4o-2024-08-06", true, "2024-08-06", "2024-11-20"},
		{"gpt-4", "turbo-2024-04-09", "gpt-4-turbo-2024-04-09", true, "turbo-2024-04-09", "turbo-2024-04-09"},
		{"gpt-4", "0613", "gpt-4-0613", true, "0613", "0613"},
		{"gpt-35-turbo", "0125", "gpt-35-turbo", true, "", "0125"},
		{"gpt-3.5-turbo", "", "gpt-35-turbo-0125", true, "0125", ""},
		{"o4-mini", "2025-04-16", "o4-mini-2025-04-16", true, "2025-04-16", "2025-04-16"},
		{"gpt-4.1", "2025-04-14", "gpt-4.1-mini-2025-04-14", false, "", "2025-04-14"},
		{"", "", "contoso-ft", true, "", ""}, // no model configured: nothing to compare
	} {
		same, served, want := servedAs(c.model, c.version, c.reported)
		if same != c.same || served != c.served || want != c.want {
			t.Errorf("servedAs(%q, %q, %q) = %v, %q, %q; want %v, %q, %q", c.model, c.version, c.reported, same, served, want, c.same, c.served, c.want)
		}
	}
}
