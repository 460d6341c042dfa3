package calltypes

import (
	"strconv"
	"strings"
)

// A file note is the view's note for a file the run downloaded: what
// became of it, then, for a text file, what it begins with, quoted, its
// lines joined by fileLineSep, so no word of the file reads as a line of
// the view. FileNote writes one and FileNoteLines reads its lines back.

const (
	fileBegins  = ", which begins "
	fileLineSep = " / "
)

// FileNote is the note for a file: head says what became of it
// (`downloaded "report.csv" (77 bytes)`), text is what it begins with,
// "" for a file that is not text.
func FileNote(head, text string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return head
	}
	return head + fileBegins + strconv.Quote(strings.Join(strings.Split(text, "\n"), fileLineSep))
}

// FileNoteLines are the lines of the file a note written by FileNote
// quotes; false for any other note.
func FileNoteLines(note string) ([]string, bool) {
	_, quoted, ok := strings.Cut(note, fileBegins)
	if !ok {
		return nil, false
	}
	text, err := strconv.Unquote(quoted)
	if err != nil {
		return nil, false
	}
	return strings.Split(text, fileLineSep), true
}
