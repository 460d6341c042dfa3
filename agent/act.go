package agent

import (
	"fmt"

	"github.com/headroom-agent/headroom/browser"
	"github.com/headroom-agent/headroom/calltypes"
)

// BrowserAction is the browser action a model's pick stands for, its index
// bound to the snapshot the model saw, so observing again before acting
// cannot move it onto another element. Run it with Page.Do, the one path
// every action takes, scripted or picked. done has no browser action.
func BrowserAction(s *browser.Snapshot, a calltypes.Action) (browser.Action, error) {
	switch a.Kind {
	case calltypes.ActClick:
		return browser.Click(s.Index(a.Index)), nil
	case calltypes.ActType:
		return browser.TypeInto(s.Index(a.Index), a.Text, a.Submit), nil
	case calltypes.ActSelect:
		return browser.SelectOption(s.Index(a.Index), a.Text), nil
	case calltypes.ActScroll:
		if a.Text == "" {
			return browser.ScrollTo(s.Index(a.Index)), nil
		}
		return browser.ScrollBy(a.Text), nil
	case calltypes.ActNavigate:
		return browser.Navigate(a.Text), nil
	}
	return browser.Action{}, fmt.Errorf("agent: %s has no browser action", a)
}
