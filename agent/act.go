package agent

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// ActionFunc is what an action does on the page: the browser action a
// pick stands for, its index bound to the snapshot the model saw (s.Index),
// so observing again before acting cannot move it onto another element.
type ActionFunc func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error)

// actionFuncs are the registered actions' ActionFuncs, by name.
var actionFuncs struct {
	mu sync.RWMutex
	m  map[string]ActionFunc
}

// RegisterAction adds an action the model may pick, as the built-ins are
// added: spec tells click-pick of it and reads and writes its written
// form (calltypes.RegisterAction), and do says what it does on the page,
// usually a browser.Perform of the caller's own. Learned runs record it in
// its written form and replay it through do. Register in init, before
// any registry is made, as database/sql drivers are.
func RegisterAction(spec calltypes.ActionSpec, do ActionFunc) error {
	if do == nil {
		return fmt.Errorf("agent: action %s: nothing to do (do is nil)", spec.Name)
	}
	if err := calltypes.RegisterAction(spec); err != nil {
		return err
	}
	bindAction(spec.Name, do)
	return nil
}

func bindAction(name string, do ActionFunc) {
	actionFuncs.mu.Lock()
	defer actionFuncs.mu.Unlock()
	if actionFuncs.m == nil {
		actionFuncs.m = map[string]ActionFunc{}
	}
	actionFuncs.m[name] = do
}

// BrowserAction is the browser action a model's pick stands for. Run it
// with Page.Do, the one path every action takes, scripted or picked. done
// has no browser action.
func BrowserAction(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
	actionFuncs.mu.RLock()
	do := actionFuncs.m[a.Kind]
	actionFuncs.mu.RUnlock()
	if do == nil {
		return browser.Action{}, fmt.Errorf("agent: %s has no browser action", a)
	}
	return do(s, a)
}

// The built-in actions' browser actions; calltypes tells the model of
// them.
func init() {
	for name, do := range map[string]ActionFunc{
		calltypes.ActClick: func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.Click(s.Index(a.Index)), nil
		},
		calltypes.ActType: func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.TypeInto(s.Index(a.Index), a.Text, a.Submit), nil
		},
		calltypes.ActSelect: func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.SelectOption(s.Index(a.Index), a.Text), nil
		},
		calltypes.ActScroll: func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			if a.Text == "" {
				return browser.ScrollTo(s.Index(a.Index)), nil
			}
			return browser.ScrollBy(a.Text), nil
		},
		calltypes.ActNavigate: func(_ *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.Navigate(a.Text), nil
		},
		calltypes.ActPress: func(_ *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.Press(a.Text), nil
		},
		calltypes.ActHover: func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.Hover(s.Index(a.Index)), nil
		},
		calltypes.ActBack: func(*browser.Snapshot, calltypes.Action) (browser.Action, error) {
			return browser.Back(), nil
		},
		// Bounded by the action timeout; a page that never changes is a
		// failed step the model reads, not a hang.
		calltypes.ActWait: func(*browser.Snapshot, calltypes.Action) (browser.Action, error) {
			return browser.Wait(browser.WaitChange), nil
		},
		calltypes.ActUpload: func(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			return browser.Upload(s.Index(a.Index), browser.FileName(a.Text)), nil
		},
		calltypes.ActTab: func(_ *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
			n, err := strconv.Atoi(a.Text)
			if err != nil {
				return browser.Action{}, fmt.Errorf("agent: %s: the tab is a number", a)
			}
			return browser.SwitchTab(n), nil
		},
		calltypes.ActCloseTab: func(*browser.Snapshot, calltypes.Action) (browser.Action, error) {
			return browser.CloseTab(), nil
		},
	} {
		bindAction(name, do)
	}
}
