package daemon

import (
	"fmt"

	"github.com/swctl/swctl/internal/config"
)

// protect gives the bridge's member called name the storm limit and BPDU
// guard of p. The guard is armed on every guarded member while no
// spanning tree runs, or while the member takes no part in it; with a
// spanning tree it is armed on guarded edge ports only ("edge", the
// administrative setting: an operational edge port stops being one at the
// BPDU the guard is for).
func (b *bridgeObj) protect(name string, p *config.Port) error {
	if err := b.br.SetStormLimit(name, p.StormLimit); err != nil {
		return err
	}
	armed := p.BPDUGuard
	if st := p.STPSettings(); b.stp != nil && st.Enabled {
		armed = armed && st.Edge
	}
	if err := b.br.SetBPDUGuard(name, armed); err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	return nil
}

// protectAll gives every attached member of c its storm limit and BPDU
// guard: after the spanning tree starts or stops, which changes where the
// guard is armed.
func (b *bridgeObj) protectAll(c *config.Bridge) {
	for i := range c.Ports {
		if po := b.ports[c.Ports[i].Name]; po != nil && po.port != nil {
			if err := b.protect(po.name, &c.Ports[i]); err != nil {
				b.g.log.Error("member keeps its old storm limit and BPDU guard", "bridge", b.name, "port", po.name, "err", err)
			}
		}
	}
}

// protectNew is protect for a member just added. It cannot fail (the
// member is there, the configuration checked the limit); should it, the
// member forwards unprotected and the failure is logged.
func (b *bridgeObj) protectNew(name string, p *config.Port) {
	if err := b.protect(name, p); err != nil {
		b.g.log.Error("member has no storm limit or BPDU guard", "bridge", b.name, "port", name, "err", err)
	}
}
