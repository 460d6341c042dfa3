package calltypes

import (
	"slices"
	"testing"
)

func TestFileNoteReadsBack(t *testing.T) {
	note := FileNote(`downloaded "r.csv" (26 bytes)`, "month,orders\r\nDecember,412\n")
	if want := `downloaded "r.csv" (26 bytes), which begins "month,orders / December,412"`; note != want {
		t.Errorf("FileNote = %q, want %q", note, want)
	}
	lines, ok := FileNoteLines(note)
	if !ok || !slices.Equal(lines, []string{"month,orders", "December,412"}) {
		t.Errorf("FileNoteLines = %q, %v", lines, ok)
	}
	if note := FileNote("downloaded \"a.pdf\" (9 bytes)", ""); note != `downloaded "a.pdf" (9 bytes)` {
		t.Errorf("a file that is not text: %q", note)
	}
	if _, ok := FileNoteLines("41 more elements below: scroll down"); ok {
		t.Error("another note read as a file's")
	}
}
