// Package health is the health state of a load-balancer backend: a state
// machine fed the results of the backend's checks, doing no I/O and
// starting no goroutine of its own. The prober that dials the backend
// (tcp, http, arp) lives with the daemon and calls Record with each
// result; the clock is injected (clock.Fake in tests).
//
// A backend starts Unknown: it has not been checked yet and must not
// take traffic. Its first result decides at once (a success makes it Up,
// a failure Down), so that a service starts serving after one check
// rather than after Rise intervals, and a dead backend never serves.
// From then on an Up backend goes Down after Fall consecutive failures,
// and a Down backend goes Up after Rise consecutive successes; a result
// of the other kind restarts the count. Every change of state logs one
// line and is kept with its time (Status.Since).
package health
