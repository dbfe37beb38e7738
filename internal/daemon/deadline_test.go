package daemon

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/config"
)

// expiringCtx is a request's context whose deadline the test makes pass
// at the moment it chooses.
type expiringCtx struct {
	context.Context
	// expired makes Err report the deadline passed.
	expired atomic.Bool
}

func (c *expiringCtx) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

func TestEngineChangeOutlivingItsDeadlineIsUndone(t *testing.T) {
	const want = "not applied: the request's deadline passed before the daemon could make the change (context deadline exceeded)"
	tests := []struct {
		name string
		// expireOn is the interface whose opening makes the deadline
		// pass; "" for a deadline passed before the change starts.
		expireOn string
	}{
		{"passed while the engine waited", ""},
		{"passed while the change was applied", "eth2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := newFakeSystem("eth1", "eth2")
			e, path := newTestEngine(t, sys)
			mustDo(t, e.Change(bg, api.BridgeCreateRequest{Name: "bridge0"}))
			ctx := &expiringCtx{Context: bg}
			ctx.expired.Store(tt.expireOn == "")
			var opened []string
			sys.onOpen = func(name string) {
				opened = append(opened, name)
				if name == tt.expireOn {
					ctx.expired.Store(true)
				}
			}
			err := e.Change(ctx, api.BridgeAddRequest{Name: "bridge0", Ifaces: []string{"eth1", "eth2"}})
			if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Change: expected %q, got %v", want, err)
			}
			if tt.expireOn == "" && len(opened) != 0 {
				t.Errorf("ports opened for a change refused before it started: %v", opened)
			}
			for _, n := range []string{"eth1", "eth2"} {
				if open, guards := sys.counts(n); open != 0 || guards != 0 {
					t.Errorf("%s after the undone change: %d ports and %d guards open, want none", n, open, guards)
				}
			}
			show, err := e.BridgeShow(bg, "bridge0")
			if err != nil || len(show[0].Ports) != 0 {
				t.Errorf("bridge0 after the undone change: members %+v (%v), want none", show, err)
			}
			saved, err := config.Load(path)
			if err != nil || len(saved.Bridge("bridge0").Ports) != 0 {
				t.Errorf("saved configuration after the undone change: %+v (%v), want bridge0 without members", saved, err)
			}
		})
	}
}
