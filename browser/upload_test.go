package browser

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUploadGivesTheDeclaredFileByteForByte: a declared file reaches the
// site whole, and its path never reaches the page's words; a name the
// task does not declare and an element that is no file input get
// nothing.
func TestUploadGivesTheDeclaredFileByteForByte(t *testing.T) {
	s := site(t)
	ctx := ctxT(t)
	dir := t.TempDir()
	data := make([]byte, 3000)
	rand.Read(data)
	path := filepath.Join(dir, "invoice-7.pdf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("3000 bytes, digest %x.", sha256.Sum256(data))[:len("3000 bytes, digest ")+16]
	p := open(t, Options{AllowedDomains: []string{"127.0.0.1"}, Files: []File{{Name: "invoice", Path: path}}})
	steps := []Step{
		{Navigate: s.URL + "/orders/upload.html"},
		{Upload: "#invoice", File: "<file:invoice>"},
		{Click: "button", Expect: want},
	}
	for i, st := range steps {
		out, err := p.Do(ctx, st.Action(dir))
		if err != nil {
			t.Fatalf("step %d (%s): %v", i+1, st, err)
		}
		if st.Upload != "" && out.Detail != "chose <file:invoice>" {
			t.Errorf("the upload's outcome is %q", out)
		}
	}
	if strings.Contains(observeText(t, p), dir) {
		t.Error("the file's path reached the page's words")
	}

	if _, err := p.Navigate(ctx, s.URL+"/orders/upload.html"); err != nil {
		t.Fatal(err)
	}
	_, err := p.Upload(ctx, CSS("#invoice"), "passwd")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "<file:passwd> names no file the task declares") {
		t.Errorf("an undeclared name: %v", err)
	}
	if _, err := p.Upload(ctx, CSS("button"), "invoice"); !errors.Is(err, ErrNotInput) {
		t.Errorf("a button given a file: %v, want ErrNotInput", err)
	}
}

func TestOptionsRefuseFilesThatCannotBeGiven(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		files []File
		want  string
	}{
		{[]File{{Name: "a b", Path: file}}, `"a b" is not a file name`},
		{[]File{{Name: "a", Path: file}, {Name: "a", Path: file}}, "file a is given twice"},
		{[]File{{Name: "a", Path: dir}}, "is not a regular file"},
		{[]File{{Name: "a", Path: filepath.Join(dir, "none")}}, "is not a regular file"},
	} {
		o := Options{Files: c.files}
		if err := o.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.files, err, c.want)
		}
	}
}
