package agent

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/internal/redact"
	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// SecretSource is where a task's secret comes from, and where it may be
// typed:
//
//	secrets:
//	  portal_password: {env: PORTAL_PASSWORD, domains: [portal.example.com]}
//	  portal_user: {file: /run/secrets/portal_user}
//
// Exactly one of Env and File; Domains empty means the task's allowed
// domains.
type SecretSource struct {
	Env     string   `yaml:"env" json:"env,omitempty"`
	File    string   `yaml:"file" json:"file,omitempty"`
	Domains []string `yaml:"domains" json:"domains,omitempty"`
}

// maxSecretFile bounds a secret's file: a password, a token, a key.
const maxSecretFile = 64 << 10

// placeholderStart begins every placeholder (browser.Placeholder).
var placeholderStart = strings.TrimSuffix(browser.Placeholder(""), ">")

// checkSecrets checks the secrets as written, and that every placeholder
// in the goal and the steps names one; it reads no value.
func (t *Task) checkSecrets(doc *yamlconf.Doc) error {
	for _, name := range slices.Sorted(maps.Keys(t.Secrets)) {
		s, field := t.Secrets[name], "secrets."+name
		switch {
		case browser.CheckSecretName(name) != nil:
			return doc.Errorf(field, "%v", browser.CheckSecretName(name))
		case (s.Env == "") == (s.File == ""):
			return doc.Errorf(field, "a secret comes from env: VAR or from file: PATH, one of the two")
		}
		for i, d := range s.Domains {
			if err := browser.CheckDomain(d); err != nil {
				return doc.Errorf(fmt.Sprintf("%s.domains[%d]", field, i), "%v", err)
			}
		}
	}
	texts := map[string]string{"goal": t.Goal}
	for i, s := range t.Steps {
		texts[fmt.Sprintf("steps[%d]", i)] = s.Agent + " " + s.Text
	}
	for _, field := range slices.Sorted(maps.Keys(texts)) {
		for _, name := range browser.PlaceholderNames(texts[field]) {
			if _, ok := t.Secrets[name]; !ok {
				return doc.Errorf(field, "%s names no secret: declare it under secrets: with env: or file:", browser.Placeholder(name))
			}
		}
	}
	return nil
}

// BrowserSecrets reads the task's secrets, for the browser to type by
// name (browser.Options.Secrets); RunTask does this itself. Each value
// becomes a secret of the process at once: no output writes it. A
// variable unset or empty, or a file missing or empty, is an error naming
// the secret (ErrUsage), never an empty value typed; so is a value that
// holds a placeholder, which the browser would refuse.
func (t *Task) BrowserSecrets() ([]browser.Secret, error) {
	var out []browser.Secret
	for _, name := range slices.Sorted(maps.Keys(t.Secrets)) {
		s := t.Secrets[name]
		v, err := s.read()
		switch {
		case err != nil:
		case redact.Usable(v) != nil:
			// Too short to scrub from every output without scrubbing
			// ordinary words with it, or part of the mark that replaces it.
			err = fmt.Errorf("the value cannot be kept out of every output: %w", redact.Usable(v))
		case strings.Contains(v, placeholderStart):
			// Typed, the placeholder in it would stand for another
			// secret, or for none.
			err = fmt.Errorf("the value holds %q, which begins a secret's placeholder: a value cannot hold it, so change the secret", placeholderStart)
		}
		if err != nil {
			return nil, Usage(fmt.Errorf("%s: secrets.%s: %w", t.File, name, err))
		}
		redact.Secret(v)
		out = append(out, browser.Secret{Name: name, Value: v, Domains: s.Domains})
	}
	return out, nil
}

// shown is the text of a type action as a step may show it: the text
// itself when it holds nothing but placeholders (they name, and hide,
// their values), else the mark, since a value typed where a secret goes
// is one.
func shown(text string, secret bool) string {
	if !secret {
		return text
	}
	rest := text
	for _, name := range browser.PlaceholderNames(text) {
		rest = strings.ReplaceAll(rest, browser.Placeholder(name), "")
	}
	if rest != "" {
		return redact.Marker
	}
	return text
}

// read is the secret's value, from its variable or its file (one
// trailing newline dropped, as files written by echo end).
func (s SecretSource) read() (string, error) {
	if s.Env != "" {
		v := os.Getenv(s.Env)
		if v == "" {
			return "", fmt.Errorf("$%s is not set, or is empty: set it to the secret's value", s.Env)
		}
		return v, nil
	}
	b, err := safefile.ReadFile(s.File, maxSecretFile, "secret file")
	if err != nil {
		return "", err
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("%s is empty: write the secret's value in it", s.File)
	}
	return v, nil
}
