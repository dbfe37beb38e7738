package regress

import "errors"

// changes is what a testbed changed, one step per change that puts it
// back, in the order the changes were made: namespaces, processes,
// daemons, addresses, promiscuous mode, commands (testbed).
type changes []func() error

// undoTo puts back the changes after the first n, newest first, and
// returns every error; it goes on after errors.
func (c *changes) undoTo(n int) error {
	var errs []error
	for i := len(*c) - 1; i >= n; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = (*c)[:n]
	return errors.Join(errs...)
}
