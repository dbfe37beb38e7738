package regress

import (
	"fmt"
	"slices"

	"github.com/swctl/swctl/internal/stats"
)

// RoleCell is results.json's summary of one cell of any suite: one
// metric of one row for one role. The fields a suite does not use are
// empty.
type RoleCell struct {
	// Setup is the setup's name (bridge0, trunk0); empty in the
	// load-balancing suite.
	Setup string `json:"setup,omitempty"`
	// Row names the row: Receive, Transmit or Forward (iperf3 suite),
	// the bulk suite's row (one pair, two pairs ...), the load-balancing
	// suite's row; empty elsewhere.
	Row string `json:"row,omitempty"`
	// Promisc is the iperf3 suite's column; false elsewhere.
	Promisc bool `json:"promisc,omitempty"`
	// Mode is the load-balancing suite's LBClose or LBKeepAlive; empty
	// elsewhere.
	Mode string `json:"mode,omitempty"`
	// Metric is the key of a metric of the suite (throughput, loss,
	// packets_per_second ...).
	Metric string `json:"metric"`
	// Size is the row's message size (TCP) or RFC 2544 frame size; 0
	// elsewhere.
	Size int `json:"size,omitempty"`
	// Percent is the frame-loss-rate row's offered load, percent of the
	// max-rate run's sent rate; 0 elsewhere.
	Percent int `json:"percent,omitempty"`
	// Role is RolePatch or RoleNoPatch; in the load-balancing suite the
	// swctl binary's role in the swctl row, empty in other rows.
	Role string `json:"role,omitempty"`
	// Comparison is the samples' summary and the patch-no patch test
	// (no test in the load-balancing suite: P 0, not significant).
	Comparison
	// Figure, on a forwarding-rate cell (max_rate, zero_loss, cpu_net,
	// cpu_gross), is what its runs offered, achieved and delivered, and
	// how many were tester-bound; nil elsewhere.
	Figure *FigureSummary `json:"figure,omitempty"`
}

// Metric is a figure a suite summarises per cell from its samples of
// type S.
type Metric[S any] struct {
	// Key names the metric in results.json.
	Key string
	// Title names it in the printed table: the table's title, a column's
	// or a row's.
	Title string
	// Format formats its figures in the printed table.
	Format string
	// Value extracts the metric from a sample (ok false: not measured).
	Value func(s S) (float64, bool)
}

// summarize appends to out, per metric of metrics and per place of
// places (a cell's setup, row, column, size and percent), a patch and a
// no-patch cell of the samples in finds at the place, by their role.
func summarize[S any](out []RoleCell, metrics []Metric[S], places []RoleCell, samples []S, in func(x S, place RoleCell) (role string, ok bool), alpha float64) []RoleCell {
	for _, m := range metrics {
		for _, place := range places {
			vals := roleValues(samples, func(x S) (string, float64, bool) {
				v, ok := m.Value(x)
				role, at := in(x, place)
				return role, v, ok && at
			})
			place.Metric = m.Key
			out = append(out, roleCells(place, vals, alpha)...)
		}
	}
	return out
}

// Comparison is one role's side of a cell: its samples summarised, and
// the Mann-Whitney test of patch against no patch (the same on both
// sides).
type Comparison struct {
	// NA is set when the cell was not measured.
	NA bool `json:"na,omitempty"`
	// Summary describes the samples.
	Summary stats.Summary `json:"summary"`
	// Values are the samples in run order.
	Values []float64 `json:"values"`
	// P is the Mann-Whitney p-value of patch against no patch.
	P float64 `json:"p"`
	// Significant says P < alpha.
	Significant bool `json:"significant"`
}

// RoleRun is one start of the device under test with one binary in a
// suite with one instance per role and run (message sizes, bulk, address
// caching): all of the suite's tests, one run.
type RoleRun struct {
	// Suite names the suite and its setup for the progress line.
	Suite string
	// Role is RolePatch or RoleNoPatch.
	Role string
	// Run counts from 1.
	Run int
}

// String describes the instance for the progress line.
func (in RoleRun) String() string { return fmt.Sprintf("%s %s run %d", in.Suite, in.Role, in.Run) }

// roleRunPlan orders suite's instances: runs alternate A B, B A, ...
func roleRunPlan(suite string, runs int) []RoleRun {
	return abPlan(runs, func(role string, run int) RoleRun { return RoleRun{Suite: suite, Role: role, Run: run} })
}

// bothRoles are the roles in table order.
var bothRoles = [2]string{RolePatch, RoleNoPatch}

// roleValues collects, by role, the value of in for every sample of
// samples that in accepts (ok).
func roleValues[S any](samples []S, in func(S) (role string, v float64, ok bool)) map[string][]float64 {
	vals := map[string][]float64{}
	for _, x := range samples {
		if role, v, ok := in(x); ok {
			vals[role] = append(vals[role], v)
		}
	}
	return vals
}

// roleCells summarises vals (by role) into a patch and a no-patch cell
// that share template's setup, metric, size and percent, and compares
// patch with no patch at alpha (the same test on both sides).
func roleCells(template RoleCell, vals map[string][]float64, alpha float64) []RoleCell {
	p, sig := stats.Compare(vals[RolePatch], vals[RoleNoPatch], alpha)
	var out []RoleCell
	for _, role := range bothRoles {
		c, v := template, vals[role]
		c.Role = role
		c.Comparison = Comparison{NA: len(v) == 0, Summary: stats.Summarize(v), Values: v, P: p, Significant: sig}
		out = append(out, c)
	}
	return out
}

// findCell returns the cell of cells with key's setup, row, column,
// mode, metric, size, percent and role; nil when there is none.
func findCell(cells []RoleCell, key RoleCell) *RoleCell {
	i := slices.IndexFunc(cells, func(c RoleCell) bool {
		return c.Setup == key.Setup && c.Row == key.Row && c.Promisc == key.Promisc && c.Mode == key.Mode &&
			c.Metric == key.Metric && c.Size == key.Size && c.Percent == key.Percent && c.Role == key.Role
	})
	if i < 0 {
		return nil
	}
	return &cells[i]
}

// pairCells returns a row's cells in cells, per metric of metrics the
// patch and the no-patch cell at key's place (setup, row, size and
// percent); cells not there are n/a.
func pairCells(cells []RoleCell, key RoleCell, metrics ...string) []Cell {
	var out []Cell
	for _, m := range metrics {
		for _, role := range bothRoles {
			key.Metric, key.Role = m, role
			out = append(out, findCell(cells, key).mean())
		}
	}
	return out
}
