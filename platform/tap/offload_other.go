//go:build !linux

package tap

import (
	"fmt"
	"runtime"

	"github.com/swctl/swctl/platform"
)

// Only Linux TAPs carry offloads: Create refuses Options.Offload
// elsewhere, so these are never reached.

func (p *Port) readOffload(platform.Batch, int) (int, error) {
	return 0, fmt.Errorf("tap %s: offloads: not on %s", p.name, runtime.GOOS)
}

func (p *Port) writeOffload(platform.Batch) (int, error) {
	return 0, fmt.Errorf("tap %s: offloads: not on %s", p.name, runtime.GOOS)
}
