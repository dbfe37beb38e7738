//go:build !linux && !openbsd && !freebsd

package tap

import (
	"fmt"
	"runtime"
)

// pollFD is unused where there is no TAP.
type pollFD struct{}

func errNotImplemented(what string) error {
	return fmt.Errorf("%s not implemented on %s", what, runtime.GOOS)
}

func create(name string, _ Options) (*Port, error) {
	return nil, fmt.Errorf("tap %s: %w", name, errNotImplemented("Create"))
}

func (p *Port) readFrom([][]byte, int) (int, int, error) {
	return 0, 0, fmt.Errorf("tap %s: %w", p.name, errNotImplemented("ReadBatch"))
}
func (p *Port) writeBatch([][]byte) (int, error) {
	return 0, fmt.Errorf("tap %s: %w", p.name, errNotImplemented("WriteBatch"))
}
func (p *Port) setCarrier(bool) error {
	return fmt.Errorf("tap %s: %w", p.name, errNotImplemented("SetCarrier"))
}
func (p *Port) close() error { return nil }
func setInterfaceMTU(ifname string, _ int) error {
	return fmt.Errorf("%s: %w", ifname, errNotImplemented("SetInterfaceMTU"))
}
