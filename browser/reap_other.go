//go:build !linux

package browser

func becomeSubreaper() {}

func collect(pid int) {}
