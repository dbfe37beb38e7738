package health_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/swctl/swctl/clock"
	"github.com/swctl/swctl/lb/health"
)

// A prober checks a backend every interval and records each result; the
// service maps the state to the backend's lb.BackendState.
func Example() {
	clk := clock.NewFake()
	m, err := health.New("web: backend 10.0.0.7", health.Config{}, clk, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	refused := errors.New("connect: connection refused")
	for _, result := range []error{nil, refused, refused, refused, nil, nil} {
		clk.Advance(2 * time.Second)
		changed := m.Record(result)
		fmt.Println(m.State(), changed)
	}
	// Output:
	// up true
	// up false
	// up false
	// down true
	// down false
	// up true
}
