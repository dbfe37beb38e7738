package linkwatch_test

import (
	"context"
	"fmt"

	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/platform/linkwatch"
)

// The daemon's use: learn the current state, then follow changes. Applying
// an event twice is harmless, so the overlap between the two is too.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := linkwatch.Watch(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	state := map[string]platform.LinkState{}
	for _, e := range w.Snapshot() {
		state[e.Name] = e.State
	}
	for e := range w.Events() { // until cancel
		if state[e.Name] != e.State {
			// Attach a member that appeared, mark one absent, give
			// a Port its new state (platform.LinkSetter)...
			state[e.Name] = e.State
		}
	}
}
