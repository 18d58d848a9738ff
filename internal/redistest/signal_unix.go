//go:build unix

package redistest

import "syscall"

// The signals that freeze and thaw a server process.
var sigStop, sigCont = syscall.SIGSTOP, syscall.SIGCONT
