//go:build !linux

package redistest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; [Main] stops the
// servers when the tests end normally.
func sysProcAttr() *syscall.SysProcAttr { return nil }
