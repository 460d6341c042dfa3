package browser

import (
	"sync"
	"syscall"
)

var subreaper sync.Once

// becomeSubreaper makes this process the parent of the launched Chrome's
// helpers once Chrome exits, instead of init, so that Close can reap them
// (a container whose PID 1 is this process has no one else to).
func becomeSubreaper() {
	subreaper.Do(func() {
		const prSetChildSubreaper = 36
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// collect reaps pid if it is a child of this process that has exited.
func collect(pid int) {
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}
