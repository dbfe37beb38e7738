package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"time"

	"github.com/swctl/swctl/internal/config"
	"github.com/swctl/swctl/lb"
	"github.com/swctl/swctl/lb/service"
)

// The lb operations (swctl lb).
const (
	OpLBCreate       = "lb.create"
	OpLBDestroy      = "lb.destroy"
	OpLBBackendAdd   = "lb.backend.add"
	OpLBBackendDel   = "lb.backend.del"
	OpLBBackendDrain = "lb.backend.drain"
	OpLBShow         = "lb.show"
)

// LBCreateRequest creates a load balancer (swctl lb create). Empty
// strings and zero values take the defaults.
type LBCreateRequest struct {
	// Name is the new lb's name.
	Name string `json:"name"`
	// Iface is the interface it runs on; Bridge the swctl bridge it sits
	// on instead. Exactly one is set.
	Iface  string `json:"iface,omitempty"`
	Bridge string `json:"bridge,omitempty"`
	// VIPs are its virtual addresses, at least one.
	VIPs []string `json:"vips"`
	// Method is maglev, hash or roundrobin; "" for maglev.
	Method string `json:"method,omitempty"`
	// Health is tcp:PORT, http:PORT/path, arp or none; "" for none.
	Health string `json:"health,omitempty"`
	// Interval and Timeout are the health check's period and bound, as
	// time.ParseDuration reads them; "" for the defaults.
	Interval string `json:"interval,omitempty"`
	Timeout  string `json:"timeout,omitempty"`
	// Rise and Fall are the health thresholds; 0 for the defaults.
	Rise int `json:"rise,omitempty"`
	Fall int `json:"fall,omitempty"`
	// Sources are the addresses it resolves and checks backends from, at
	// most one per family; none for the interface's own.
	Sources []string `json:"sources,omitempty"`
}

// LBDestroyRequest destroys an lb (swctl lb destroy).
type LBDestroyRequest struct {
	// Name is the lb.
	Name string `json:"name"`
}

// LBBackendRequest names one backend of an lb (swctl lb backend add, del
// and drain).
type LBBackendRequest struct {
	// Name is the lb.
	Name string `json:"name"`
	// Addr is the backend's real address.
	Addr string `json:"addr"`
	// Weight is its weight, add only; 0 for 1.
	Weight int `json:"weight,omitempty"`
}

// LBBackendAddRequest adds a backend, or changes its weight and serves a
// drained one again (swctl lb backend add).
type LBBackendAddRequest LBBackendRequest

// LBBackendDelRequest removes a backend (swctl lb backend del).
type LBBackendDelRequest LBBackendRequest

// LBBackendDrainRequest drains a backend: no new flows, established ones
// stay (swctl lb backend drain).
type LBBackendDrainRequest LBBackendRequest

// LBShowRequest asks for one lb or all (swctl lb show).
type LBShowRequest struct {
	// Name is the lb, or "" for every lb.
	Name string `json:"name,omitempty"`
}

// LBInfo is one lb as swctl lb show shows it.
type LBInfo struct {
	// Name is the lb's name; Iface the interface it runs on (for a
	// bridge lb, its attachment), Bridge its bridge or "".
	Name   string `json:"name"`
	Iface  string `json:"iface,omitempty"`
	Bridge string `json:"bridge,omitempty"`
	// MAC is the MAC it answers for its VIPs with; "" while not running.
	MAC string `json:"mac"`
	// VIPs are its virtual addresses; Sources the addresses it resolves
	// and checks backends from.
	VIPs    []string `json:"vips"`
	Sources []string `json:"sources"`
	// Method and Health are as configured.
	Method string `json:"method"`
	Health string `json:"health"`
	// State is "running", or why not ("absent: ...", the error that
	// stopped it from starting).
	State string `json:"state"`
	// Serving counts the backends taking new flows; AllDown is set when
	// there are backends and none of them can take a flow.
	Serving int  `json:"serving"`
	AllDown bool `json:"all_down"`
	// Flows is the number of flows in the connection table.
	Flows int `json:"flows"`
	// Frames and Bytes count frames forwarded to backends.
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// DroppedNoBackend counts frames to a VIP dropped for want of a
	// backend; DroppedUnresolved those whose backend's MAC was unknown.
	DroppedNoBackend  uint64 `json:"dropped_no_backend"`
	DroppedUnresolved uint64 `json:"dropped_unresolved"`
	// Malformed counts malformed ARP, ND and IP frames.
	MalformedARP uint64 `json:"malformed_arp"`
	MalformedND  uint64 `json:"malformed_nd"`
	MalformedIP  uint64 `json:"malformed_ip"`
	// Backends are the backends in the order they were added.
	Backends []LBBackendInfo `json:"backends"`
}

// LBBackendInfo is one backend in LBInfo.
type LBBackendInfo struct {
	// Addr is its address; MAC its MAC, "" while unresolved.
	Addr string `json:"addr"`
	MAC  string `json:"mac"`
	// Weight is its weight; State serving, draining or down.
	Weight int    `json:"weight"`
	State  string `json:"state"`
	// Health is up, down, unknown or none; HealthSince when it changed
	// last (omitted without a check); LastError its last failure.
	Health      string    `json:"health"`
	HealthSince time.Time `json:"health_since,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// Frames and Bytes count what was forwarded to it.
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
}

// MarshalJSON writes empty lists as [] rather than null.
func (l LBInfo) MarshalJSON() ([]byte, error) {
	type plain LBInfo
	if l.Backends == nil {
		l.Backends = []LBBackendInfo{}
	}
	if l.Sources == nil {
		l.Sources = []string{}
	}
	if l.VIPs == nil {
		l.VIPs = []string{}
	}
	return json.Marshal(plain(l))
}

func checkLB(name string) error { return config.CheckName("lb", name) }

// parseAddrs parses addresses with config.ParseLBAddr; what names them.
func parseAddrs(name, what string, ss []string) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		a, err := config.ParseLBAddr(what, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// lbConfig returns the configuration r asks for, or an error naming the
// lb and what is wrong.
func (r LBCreateRequest) lbConfig() (config.LB, error) {
	l := config.LB{Name: r.Name, Iface: r.Iface, Bridge: r.Bridge, Method: r.Method, Rise: r.Rise, Fall: r.Fall}
	var err error
	if l.VIPs, err = parseAddrs(r.Name, "vip", r.VIPs); err != nil {
		return l, err
	}
	if l.Sources, err = parseAddrs(r.Name, "source", r.Sources); err != nil {
		return l, err
	}
	if l.Method == "" {
		l.Method = config.DefaultLBMethod
	}
	if _, err := lb.ParseMethod(l.Method); err != nil {
		return l, fmt.Errorf("%s: %w", r.Name, err)
	}
	c, err := service.ParseCheck(r.Health)
	if err != nil {
		return l, fmt.Errorf("%s: %w", r.Name, err)
	}
	l.Health = c.String()
	for _, d := range []struct {
		flag, s string
		to      *time.Duration
	}{{"--interval", r.Interval, &l.Interval}, {"--timeout", r.Timeout, &l.Timeout}} {
		if d.s == "" {
			continue
		}
		v, err := time.ParseDuration(d.s)
		if err != nil || v <= 0 {
			return l, fmt.Errorf("%s: %s %q: want a duration such as 2s or 500ms", r.Name, d.flag, d.s)
		}
		*d.to = v
	}
	return l, nil
}

// Validate checks the request's fields.
func (r LBCreateRequest) Validate() error {
	if err := checkLB(r.Name); err != nil {
		return err
	}
	switch {
	case (r.Iface == "") == (r.Bridge == ""):
		return fmt.Errorf("%s: create: give exactly one of --iface and --bridge", r.Name)
	case len(r.VIPs) == 0:
		return fmt.Errorf("%s: create: no --vip given", r.Name)
	}
	_, err := r.lbConfig()
	return err
}

// Validate checks the request's fields.
func (r LBDestroyRequest) Validate() error { return checkLB(r.Name) }

// validate checks a backend request for verb.
func (r LBBackendRequest) validate(verb string) error {
	if err := checkLB(r.Name); err != nil {
		return err
	}
	if _, err := config.ParseLBAddr("backend", r.Addr); err != nil {
		return fmt.Errorf("%s: backend %s: %w", r.Name, verb, err)
	}
	if r.Weight < 0 || r.Weight > lb.MaxWeight || (verb != "add" && r.Weight != 0) {
		return fmt.Errorf("%s: backend %s %s: weight %d: want 1 to %d, with add only", r.Name, verb, r.Addr, r.Weight, lb.MaxWeight)
	}
	return nil
}

// addr is the backend's address, parsed (Validate passed).
func (r LBBackendRequest) addr() netip.Addr { a, _ := netip.ParseAddr(r.Addr); return a }

// Validate checks the request's fields.
func (r LBBackendAddRequest) Validate() error { return LBBackendRequest(r).validate("add") }

// Validate checks the request's fields.
func (r LBBackendDelRequest) Validate() error { return LBBackendRequest(r).validate("del") }

// Validate checks the request's fields.
func (r LBBackendDrainRequest) Validate() error { return LBBackendRequest(r).validate("drain") }

// Validate checks the request's fields.
func (r LBShowRequest) Validate() error {
	if r.Name == "" {
		return nil
	}
	return checkLB(r.Name)
}

func (LBCreateRequest) Op() string       { return OpLBCreate }
func (LBDestroyRequest) Op() string      { return OpLBDestroy }
func (LBBackendAddRequest) Op() string   { return OpLBBackendAdd }
func (LBBackendDelRequest) Op() string   { return OpLBBackendDel }
func (LBBackendDrainRequest) Op() string { return OpLBBackendDrain }
func (LBShowRequest) Op() string         { return OpLBShow }

func (r LBCreateRequest) Edit(c *config.Config, h config.Host) error {
	l, err := r.lbConfig()
	if err != nil {
		return err
	}
	return c.CreateLB(l, h)
}

func (r LBDestroyRequest) Edit(c *config.Config, _ config.Host) error { return c.DestroyLB(r.Name) }

func (r LBBackendAddRequest) Edit(c *config.Config, _ config.Host) error {
	return c.AddLBBackend(r.Name, LBBackendRequest(r).addr(), r.Weight)
}

func (r LBBackendDelRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DelLBBackend(r.Name, LBBackendRequest(r).addr())
}

func (r LBBackendDrainRequest) Edit(c *config.Config, _ config.Host) error {
	return c.DrainLBBackend(r.Name, LBBackendRequest(r).addr())
}

// lbOps are the rows of the lb operations in the operation table.
var lbOps = []opSpec{
	state[LBCreateRequest](),
	state[LBDestroyRequest](),
	state[LBBackendAddRequest](),
	state[LBBackendDelRequest](),
	state[LBBackendDrainRequest](),
	list(func(ctx context.Context, h Handler, r LBShowRequest) ([]LBInfo, error) {
		return h.LBShow(ctx, r.Name)
	}),
}
