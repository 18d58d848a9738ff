//go:build !unix

package redistest

import "os"

// There is no SIGSTOP outside Unix: Freeze and Thaw fail there.
var sigStop, sigCont os.Signal = os.Interrupt, os.Interrupt
