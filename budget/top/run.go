package top

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/headroom-agent/headroom/budget"
)

// Source reads the dashboard: (*budget.Router).Dashboard.
type Source func(context.Context) (budget.Dashboard, error)

// Run shows src on s, read every interval, until q, Q, Esc or Ctrl-C is
// pressed (nil) or ctx ends (its error). It initialises s and finalises it
// on the way out, which gives the terminal back as it was. A read that
// fails keeps the last frame on screen and says why: a Redis that blinks
// should not end the watch.
func Run(ctx context.Context, s tcell.Screen, src Source, o Options, interval time.Duration) error {
	if interval <= 0 {
		return errors.New("top: the interval must be above zero")
	}
	if err := s.Init(); err != nil {
		return err
	}
	defer s.Fini()
	s.HideCursor()
	o.Keys = true

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: the reader may hold the store
	defer cancel()

	type read struct {
		d   budget.Dashboard
		err error
	}
	reads := make(chan read)
	wg.Go(func() {
		// Reads are spaced by the interval from the start of one to the
		// start of the next; a slow store delays a frame, never the keys.
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			d, err := src(ctx)
			select {
			case reads <- read{d, err}:
			case <-ctx.Done():
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	})

	events := make(chan tcell.Event, 8)
	quit := make(chan struct{})
	go s.ChannelEvents(events, quit)
	defer close(quit)

	var last budget.Dashboard
	note := o.Note
	draw := func() {
		w, h := s.Size()
		fo := o
		fo.Width, fo.Height, fo.Note = w, h, note
		s.Clear()
		for y, l := range Render(last, last.At, fo) {
			x := 0
			for _, sp := range l {
				s.PutStrStyled(x, y, sp.Text, style(sp.Tone))
				x += width(sp.Text)
			}
		}
		s.Show()
	}
	note = join(o.Note, "reading the store...")
	draw()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r := <-reads:
			if r.err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				msg := fmt.Sprintf("the store did not answer: %v", r.err)
				if !last.At.IsZero() {
					msg += "; the frame is from " + last.At.Format(time.TimeOnly)
				}
				note = join(o.Note, msg)
			} else {
				last, note = r.d, o.Note
			}
			draw()
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			switch ev := ev.(type) {
			case *tcell.EventResize:
				s.Sync()
				draw()
			case *tcell.EventKey:
				switch {
				case ev.Key() == tcell.KeyCtrlC, ev.Key() == tcell.KeyEscape,
					ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == 'Q'):
					return nil
				}
			}
		}
	}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// style colours a tone. tcell drops the colours on a terminal without them
// (or with NO_COLOR set); bold and dim stay where the terminal has them.
func style(t Tone) tcell.Style {
	s := tcell.StyleDefault
	switch t {
	case Dim:
		return s.Dim(true)
	case Title:
		return s.Bold(true)
	case Good:
		return s.Foreground(tcell.ColorGreen)
	case Warn:
		return s.Foreground(tcell.ColorYellow)
	case Bad:
		return s.Foreground(tcell.ColorRed).Bold(true)
	}
	return s
}
