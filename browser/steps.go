package browser

import (
	"fmt"
	"strings"
	"time"

	"github.com/headroom-agent/headroom/internal/safefile"
	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// Step is one scripted action, for the plain selector work that needs no
// model. Exactly one action field is set; Expect may join any of them.
// A selector starting with / or ( is XPath, anything else CSS.
//
//   - navigate: /search
//   - type: "#q"
//     text: walnut desk
//     submit: true
//   - wait: network
//   - click: "//a[contains(., 'Walnut')]"
//   - expect: In stock
type Step struct {
	Click      string `yaml:"click,omitempty" json:"click,omitempty"`
	Type       string `yaml:"type,omitempty" json:"type,omitempty"`
	Text       string `yaml:"text,omitempty" json:"text,omitempty"`
	Submit     bool   `yaml:"submit,omitempty" json:"submit,omitempty"`
	Select     string `yaml:"select,omitempty" json:"select,omitempty"`
	Option     string `yaml:"option,omitempty" json:"option,omitempty"`
	Navigate   string `yaml:"navigate,omitempty" json:"navigate,omitempty"`
	Scroll     string `yaml:"scroll,omitempty" json:"scroll,omitempty"` // up, down, or a selector to bring into view
	Press      string `yaml:"press,omitempty" json:"press,omitempty"`   // a key or a chord: Enter, Escape, Ctrl+A
	Hover      string `yaml:"hover,omitempty" json:"hover,omitempty"`
	Upload     string `yaml:"upload,omitempty" json:"upload,omitempty"` // a file input's selector
	File       string `yaml:"file,omitempty" json:"file,omitempty"`     // the declared file to upload, by name
	Back       bool   `yaml:"back,omitempty" json:"back,omitempty"`
	Tab        int    `yaml:"tab,omitempty" json:"tab,omitempty"` // switch to the open tab of this number, from 1
	CloseTab   bool   `yaml:"close_tab,omitempty" json:"close_tab,omitempty"`
	Wait       string `yaml:"wait,omitempty" json:"wait,omitempty"` // load, network, dom, change, or a duration such as 500ms
	Screenshot string `yaml:"screenshot,omitempty" json:"screenshot,omitempty"`
	// Expect is text the page must show after the step.
	Expect string `yaml:"expect,omitempty" json:"expect,omitempty"`
}

// Selector turns a step's selector into a Target.
func Selector(s string) Target {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "(") {
		return XPath(s)
	}
	return CSS(s)
}

// actions lists the step's action fields that are set.
func (s Step) actions() []string {
	var set []string
	add := func(name string, on bool) {
		if on {
			set = append(set, name)
		}
	}
	add("click", s.Click != "")
	add("type", s.Type != "")
	add("select", s.Select != "")
	add("navigate", s.Navigate != "")
	add("scroll", s.Scroll != "")
	add("press", s.Press != "")
	add("hover", s.Hover != "")
	add("upload", s.Upload != "")
	add("back", s.Back)
	add("tab", s.Tab != 0)
	add("close_tab", s.CloseTab)
	add("wait", s.Wait != "")
	add("screenshot", s.Screenshot != "")
	return set
}

// String is the step as a person would say it, with its selectors as
// the file writes them.
func (s Step) String() string {
	return s.Action("").say(func(t Target) string {
		switch t := t.(type) {
		case CSS:
			return string(t)
		case XPath:
			return string(t)
		}
		return t.String()
	})
}

// Action is what the step does, for Page.Do. A screenshot's file name is
// taken relative to dir.
func (s Step) Action(dir string) Action {
	var a Action
	switch {
	case s.Click != "":
		a = Click(Selector(s.Click))
	case s.Type != "":
		a = TypeInto(Selector(s.Type), s.Text, s.Submit)
	case s.Select != "":
		a = SelectOption(Selector(s.Select), s.Option)
	case s.Navigate != "":
		a = Navigate(s.Navigate)
	case s.Scroll == "up" || s.Scroll == "down":
		a = ScrollBy(s.Scroll)
	case s.Scroll != "":
		a = ScrollTo(Selector(s.Scroll))
	case s.Press != "":
		a = Press(s.Press)
	case s.Hover != "":
		a = Hover(Selector(s.Hover))
	case s.Upload != "":
		a = Upload(Selector(s.Upload), s.File)
	case s.Back:
		a = Back()
	case s.Tab != 0:
		a = SwitchTab(s.Tab)
	case s.CloseTab:
		a = CloseTab()
	case s.Wait != "":
		switch until, delay, err := parseWait(s.Wait); {
		case err != nil: // a step ParseSteps would refuse: Page.Wait names it
			a = Wait(WaitFor(s.Wait))
		case until != "":
			a = Wait(until)
		default:
			a = Pause(delay)
		}
	case s.Screenshot != "":
		// A name that would leave dir gets no file: Page.Do refuses a
		// screenshot with none (ParseSteps refuses such a name first).
		file, err := safefile.Within(dir, s.Screenshot)
		if err != nil {
			file = ""
		}
		a = SaveScreenshot(file)
	}
	return a.Expecting(s.Expect)
}

// Actions are the steps' actions, screenshots written into dir.
func Actions(steps []Step, dir string) []Action {
	acts := make([]Action, len(steps))
	for i, s := range steps {
		acts[i] = s.Action(dir)
	}
	return acts
}

// ParseSteps reads a steps file: a YAML list of steps. Problems are
// reported as file:line: [i].field: what is wrong.
func ParseSteps(file string, data []byte) ([]Step, error) {
	var steps []Step
	doc, err := yamlconf.Decode(file, data, &steps)
	if err != nil {
		return nil, err
	}
	for i, s := range steps {
		at := fmt.Sprintf("[%d]", i)
		acts := s.actions()
		switch {
		case len(acts) == 0 && s.Expect == "":
			return nil, doc.Errorf(at, "a step needs one action: click, type, select, navigate, scroll, press, hover, upload, back, tab, close_tab, wait, screenshot or expect")
		case len(acts) > 1:
			return nil, doc.Errorf(at, "one action per step, this one has %s", strings.Join(acts, " and "))
		case s.Select != "" && s.Option == "":
			return nil, doc.Errorf(at+".select", "select needs an option")
		case s.Option != "" && s.Select == "":
			return nil, doc.Errorf(at+".option", "option belongs to a select step")
		case (s.Text != "" || s.Submit) && s.Type == "":
			return nil, doc.Errorf(at+".text", "text and submit belong to a type step")
		case s.Upload != "" && s.File == "":
			return nil, doc.Errorf(at+".upload", "upload needs a file: the name of one the task declares under files:")
		case s.File != "" && s.Upload == "":
			return nil, doc.Errorf(at+".file", "file belongs to an upload step")
		case s.File != "" && CheckFileName(FileName(s.File)) != nil:
			return nil, doc.Errorf(at+".file", "%v", CheckFileName(FileName(s.File)))
		case s.Wait != "":
			if _, _, err := parseWait(s.Wait); err != nil {
				return nil, doc.Errorf(at+".wait", "%v", err)
			}
		case s.Screenshot != "":
			if err := safefile.CheckName(s.Screenshot); err != nil {
				return nil, doc.Errorf(at+".screenshot", "%v", err)
			}
		case s.Tab < 0:
			return nil, doc.Errorf(at+".tab", "tab %d: tabs are numbered from 1", s.Tab)
		case s.Press != "":
			if _, _, err := ParseKey(s.Press); err != nil {
				return nil, doc.Errorf(at+".press", "%v", err)
			}
		}
	}
	return steps, nil
}

// maxStepsFile bounds what LoadSteps reads: a script is a page of YAML.
const maxStepsFile = 1 << 20

// LoadSteps reads a steps file from disk: a regular file of at most 1 MB.
func LoadSteps(path string) ([]Step, error) {
	data, err := yamlconf.ReadFile(path, maxStepsFile)
	if err != nil {
		return nil, err
	}
	return ParseSteps(path, data)
}

// parseWait reads a step's wait: a condition, or a pause for a duration.
func parseWait(w string) (WaitFor, time.Duration, error) {
	switch WaitFor(w) {
	case WaitLoad, WaitNetworkQuiet, WaitDOMStable, WaitChange:
		return WaitFor(w), 0, nil
	}
	d, err := time.ParseDuration(w)
	if err != nil || d < 0 || d > 10*time.Minute {
		return "", 0, fmt.Errorf("%q is not load, network, dom, change or a duration up to 10m", w)
	}
	return "", d, nil
}
