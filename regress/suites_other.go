//go:build !linux

package regress

import (
	"context"
	"fmt"
	"runtime"
)

// The suites below build Linux network namespaces; elsewhere they fail
// at their first instance.

// notHere is the error of a testbed that needs Linux.
func notHere(testbed string) error {
	return fmt.Errorf("regress: %s testbed not implemented on %s", testbed, runtime.GOOS)
}

func measureBulk(context.Context, *bed, BulkConfig) ([]BulkSample, error) {
	return nil, notHere("bulk")
}

func runRFC2889(context.Context, RFC2889Config, []RoleRun, suiteEnv, *Results) error {
	return notHere("address-caching")
}

func runLB(context.Context, suiteEnv, *LBResults) error {
	return notHere("load-balancing")
}
