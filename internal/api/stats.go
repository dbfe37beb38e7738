package api

import "context"

// OpStats names the stats query in a request's "op".
const OpStats = "stats"

// StatsRequest asks for every counter of the engine, as the metrics
// endpoint (`swctl daemon --metrics`) serves them (swctl stats). It has
// no arguments.
type StatsRequest struct{}

// Sample is one value of one metric, as `swctl stats` shows it and a
// scrape of the metrics endpoint gives it.
type Sample struct {
	// Name is the metric's name (swctl_port_received_frames_total).
	Name string `json:"name"`
	// Labels are its labels (port, owner, role, reason, ...); empty for
	// a metric without labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Value is its value.
	Value float64 `json:"value"`
}

// Validate checks the request's fields; there are none.
func (StatsRequest) Validate() error { return nil }

func (StatsRequest) Op() string { return OpStats }

// statsOps are the rows of the stats query in the operation table.
var statsOps = []opSpec{
	list(func(ctx context.Context, h Handler, _ StatsRequest) ([]Sample, error) { return h.Stats(ctx) }),
}
