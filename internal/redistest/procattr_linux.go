package redistest

import "syscall"

// sysProcAttr makes the kernel kill the server when the test binary dies,
// even by SIGKILL or a -timeout panic, so no redis-server is left behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
