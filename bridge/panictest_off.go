//go:build !swctl_panictest

package bridge

import "github.com/swctl/swctl/platform"

// panicTest is false in every build but the panic-supervisor test's
// (build tag swctl_panictest, panictest_on.go): the check in read is
// compiled out, and no frame can make a reader panic.
const panicTest = false

func panicOnTestFrame(platform.Batch) {}
