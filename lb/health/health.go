package health

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/swctl/swctl/clock"
)

// State is a backend's health.
type State uint8

// States.
const (
	// Unknown: not checked yet.
	Unknown State = iota
	// Up: passing its checks.
	Up
	// Down: failing its checks.
	Down
)

// stateNames are the words of String.
var stateNames = [...]string{Unknown: "unknown", Up: "up", Down: "down"}

// String returns "unknown", "up" or "down".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Thresholds.
const (
	// DefaultRise is how many consecutive successes bring a Down
	// backend Up when Config.Rise is 0.
	DefaultRise = 2
	// DefaultFall is how many consecutive failures take an Up backend
	// Down when Config.Fall is 0.
	DefaultFall = 3
	// MaxThreshold bounds Rise and Fall.
	MaxThreshold = 100
)

// Config sets the thresholds of a Machine. The zero value is valid:
// DefaultRise and DefaultFall.
type Config struct {
	// Rise is how many consecutive successes bring a Down backend Up
	// (0 means DefaultRise).
	Rise int
	// Fall is how many consecutive failures take an Up backend Down
	// (0 means DefaultFall).
	Fall int
}

// withDefaults returns c with zero fields replaced by their defaults, or
// an error naming the field out of range.
func (c Config) withDefaults() (Config, error) {
	if c.Rise == 0 {
		c.Rise = DefaultRise
	}
	if c.Fall == 0 {
		c.Fall = DefaultFall
	}
	if c.Rise < 1 || c.Rise > MaxThreshold {
		return c, fmt.Errorf("rise %d: want 1 to %d (default %d)", c.Rise, MaxThreshold, DefaultRise)
	}
	if c.Fall < 1 || c.Fall > MaxThreshold {
		return c, fmt.Errorf("fall %d: want 1 to %d (default %d)", c.Fall, MaxThreshold, DefaultFall)
	}
	return c, nil
}

// Status is a snapshot of a Machine, for display.
type Status struct {
	// State is the current state.
	State State
	// Since is when State was entered (when the Machine was made, for
	// Unknown).
	Since time.Time
	// Successes and Failures count the current run of consecutive
	// results of one kind; one of them is 0.
	Successes, Failures int
	// Checks is the number of results recorded.
	Checks uint64
	// LastCheck is when the last result was recorded (zero before the
	// first).
	LastCheck time.Time
	// LastError is the cause of the last failure, kept after later
	// successes ("" before the first failure).
	LastError string
}

// Machine is the health state machine of one backend. Its methods are
// safe for concurrent use (a prober records, a status request reads).
type Machine struct {
	// name names the backend in logs; immutable.
	name string
	// cfg is the configuration with defaults applied; immutable.
	cfg Config
	// clk stamps results and changes; immutable.
	clk clock.Clock
	// log receives one line per change of state; immutable.
	log *slog.Logger

	// mu guards st.
	mu sync.Mutex
	// st is the state and its counters.
	st Status
}

// New returns the Machine of backend name (as logs should show it, e.g.
// "web: backend 10.0.0.7"), Unknown since now on clk. A nil log
// discards. A threshold out of range is an error naming it.
func New(name string, cfg Config, clk clock.Clock, log *slog.Logger) (*Machine, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("%s: health: %w", name, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Machine{name: name, cfg: c, clk: clk, log: log, st: Status{Since: clk.Now()}}, nil
}

// Config returns the thresholds in force, defaults applied.
func (m *Machine) Config() Config { return m.cfg }

// Record records the result of one check, nil for a success or the cause
// of the failure, and reports whether the state changed.
func (m *Machine) Record(result error) (changed bool) {
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	st := &m.st
	st.Checks++
	st.LastCheck = now
	next := st.State
	if result == nil {
		st.Successes, st.Failures = st.Successes+1, 0
		if st.State == Unknown || (st.State == Down && st.Successes >= m.cfg.Rise) {
			next = Up
		}
	} else {
		st.Successes, st.Failures = 0, st.Failures+1
		st.LastError = result.Error()
		if st.State == Unknown || (st.State == Up && st.Failures >= m.cfg.Fall) {
			next = Down
		}
	}
	if next == st.State {
		return false
	}
	m.log.Info("lb: backend health", "backend", m.name, "from", st.State.String(), "to", next.String(), "cause", m.cause(result))
	st.State, st.Since = next, now
	return true
}

// cause says why the state changes on result; called with mu held.
func (m *Machine) cause(result error) string {
	n, what := m.st.Successes, "successful"
	if result != nil {
		n, what = m.st.Failures, "failed"
	}
	s := "s"
	if n == 1 {
		s = ""
	}
	c := fmt.Sprintf("%d %s check%s", n, what, s)
	if m.st.State == Unknown {
		c = "first check " + what
	}
	if result != nil {
		c += ": " + result.Error()
	}
	return c
}

// State returns the current state.
func (m *Machine) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.State
}

// Status returns a snapshot of the state and its counters.
func (m *Machine) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st
}
