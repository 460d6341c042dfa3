package agent

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// checkFiles checks the files a task declares, by name, and that every
// upload step names one of them: an upload reaches nothing else on disk.
func (t *Task) checkFiles(doc *yamlconf.Doc) error {
	for _, name := range slices.Sorted(maps.Keys(t.Files)) {
		if err := browser.CheckFileName(name); err != nil {
			return doc.Errorf("files."+name, "%v", err)
		}
		if t.Files[name] == "" {
			return doc.Errorf("files."+name, "a file needs its path, relative to the task file or absolute")
		}
	}
	for i, s := range t.Steps {
		if s.Upload == "" || s.File == "" {
			continue // the step rules say what is missing
		}
		if _, ok := t.Files[browser.FileName(s.File)]; !ok {
			return doc.Errorf(fmt.Sprintf("steps[%d].file", i), "%s names no file: declare it under files: (%s: PATH)",
				browser.FilePlaceholder(browser.FileName(s.File)), browser.FileName(s.File))
		}
	}
	return nil
}

// BrowserFiles are the task's files for the browser to upload by name
// (browser.Options.Files); RunTask does this itself. A file that is not
// there, or is no regular file, is an error naming it (ErrUsage).
func (t *Task) BrowserFiles() ([]browser.File, error) {
	var out []browser.File
	for _, name := range slices.Sorted(maps.Keys(t.Files)) {
		path := t.Files[name]
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return nil, Usage(fmt.Errorf("%s: files.%s: %s is not a file that can be read", t.File, name, path))
		}
		out = append(out, browser.File{Name: name, Path: path})
	}
	return out, nil
}

// filesNote tells a pick of the task's files, in name order.
func (t *Task) filesNote() string {
	return calltypes.FilesNote(slices.Sorted(maps.Keys(t.Files)))
}
