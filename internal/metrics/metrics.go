// Package metrics exposes the engine's counters to Prometheus: a
// collector that reads a Snapshot of the engine once per scrape (the
// engine's counters are atomics: reading them takes no lock on the
// forwarding path), an HTTP endpoint on a loopback address or a unix
// socket, and the same samples as plain values for `swctl stats`.
//
// Names follow Prometheus conventions: the swctl_ prefix, _total on
// counters, _bytes for bytes, _seconds for time; drops are one metric per
// object kind with a reason label, one reason per drop counter the
// engine keeps.
package metrics

import (
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swctl/swctl/bridge"
	"github.com/swctl/swctl/lb/service"
	"github.com/swctl/swctl/platform"
	"github.com/swctl/swctl/trunk"
)

// Snapshot is what the engine hands the collector at each scrape: plain
// values, read from its objects' counters.
type Snapshot struct {
	// Ports are every port the engine holds: bridge members, span ports,
	// TAPs, trunk members.
	Ports []Port
	// Bridges, Trunks and LBs are the engine's objects.
	Bridges []Bridge
	Trunks  []Trunk
	LBs     []LB
}

// Port is one port in a Snapshot.
type Port struct {
	// Name is the interface; Owner the bridge or trunk it belongs to;
	// Role what it is there ("member", "span", "local", "trunk").
	Name, Owner, Role string
	// Up is whether its link is up.
	Up bool
	// Counters are the port's counters.
	Counters platform.Counters
}

// Bridge is one bridge in a Snapshot.
type Bridge struct {
	// Name is the bridge's name.
	Name string
	// Addresses is the number of entries in its address table.
	Addresses int
	// Stats are its counters.
	Stats bridge.Stats
	// Capture are the counts of its packet captures.
	Capture Capture
	// STP is its spanning tree; nil while it runs none.
	STP *STP
}

// Capture are the counts of a bridge's packet captures (swctl capture)
// since the bridge started.
type Capture struct {
	// Sessions is the number of captures running.
	Sessions int
	// Queued counts the frames captures copied for their clients;
	// Dropped the frames they lost because a client did not keep up.
	Queued, Dropped uint64
	// Cut counts the captures whose client read nothing for the stream's
	// stall time, and which were cut.
	Cut uint64
}

// STP is the spanning tree of a bridge that runs one, in a Snapshot.
type STP struct {
	// IsRoot is whether the bridge is the root; RootPathCost its cost to
	// it; TopologyChanges the changes it has seen.
	IsRoot          bool
	RootPathCost    uint32
	TopologyChanges uint64
	// Ports are the tree's ports.
	Ports []STPPort
}

// STPPort is one port of a spanning tree.
type STPPort struct {
	// Name is the member; Role and State its role and state as
	// stp.Role.String and stp.State.String name them.
	Name, Role, State string
	// BPDUsIn and BPDUsOut count the valid BPDUs it received and sent.
	BPDUsIn, BPDUsOut uint64
}

// stpRoles and stpStates are the values of the one-hot role and state
// families, so that a dashboard sees a 0 for every state a port is not in.
var (
	stpRoles  = []string{"disabled", "root", "designated", "alternate", "backup"}
	stpStates = []string{"discarding", "learning", "forwarding"}
)

// Trunk is one trunk in a Snapshot.
type Trunk struct {
	// Name and Proto are the trunk's name and protocol.
	Name, Proto string
	// Active is whether frames can leave by it (its carrier).
	Active bool
	// Stats are its counters.
	Stats trunk.Stats
	// Members are its ports.
	Members []TrunkMember
}

// TrunkMember is one member of a trunk in a Snapshot.
type TrunkMember struct {
	// Name is the interface.
	Name string
	// Collecting and Distributing are its state.
	Collecting, Distributing bool
	// LACP is set when the trunk runs LACP; Selected then says whether
	// the port is in the aggregator.
	LACP, Selected bool
}

// LB is one load balancer (swctl lb) in a Snapshot.
type LB struct {
	// Name is the lb's name.
	Name string
	// Running is whether its service runs; while it does not, Status
	// holds only the configured backends, down, of unknown health.
	Running bool
	// Status is the service's status: counters, flows, backends.
	Status service.Status
}

// lbBackendStates and lbHealthStates are the values of the one-hot
// backend state and health families.
var (
	lbBackendStates = []string{"serving", "draining", "down"}
	lbHealthStates  = []string{"unknown", "up", "down"}
)

// Source returns the engine's current Snapshot; the collector calls it
// once per scrape, from the scraping goroutine.
type Source func() Snapshot

// Build identifies the running binary in swctl_build_info.
type Build struct {
	// Version, Revision and Go are as `swctl version` prints them.
	Version, Revision, Go string
}

// Collector is a prometheus.Collector over a Source.
type Collector struct {
	// src gives the snapshot; build and start describe the process.
	src   Source
	build Build
	start time.Time
	// now is the clock for uptime.
	now func() time.Time
}

// New returns a collector reading src, for a process started at start.
func New(src Source, build Build, start time.Time) *Collector {
	return &Collector{src: src, build: build, start: start, now: time.Now}
}

// desc is one metric family: its name, help and variable labels.
type desc struct {
	d    *prometheus.Desc
	kind prometheus.ValueType
}

func counter(name, help string, labels ...string) desc {
	return desc{prometheus.NewDesc(name, help, labels, nil), prometheus.CounterValue}
}

func gauge(name, help string, labels ...string) desc {
	return desc{prometheus.NewDesc(name, help, labels, nil), prometheus.GaugeValue}
}

// The metric families.
var (
	mBuild  = gauge("swctl_build_info", "The running swctl build: always 1.", "version", "revision", "goversion")
	mUptime = gauge("swctl_uptime_seconds", "Seconds since the daemon started.")
	// mGoroutines lets a soak see goroutines leak (make soak).
	mGoroutines = gauge("swctl_goroutines", "Goroutines the daemon runs.")

	mPortUp      = gauge("swctl_port_up", "1 while the port's link is up.", "port", "owner", "role")
	mPortRx      = counter("swctl_port_received_frames_total", "Frames the engine read from the port.", "port", "owner", "role")
	mPortRxBytes = counter("swctl_port_received_bytes_total", "Bytes of the frames the engine read from the port.", "port", "owner", "role")
	mPortTx      = counter("swctl_port_sent_frames_total", "Frames the engine wrote to the port.", "port", "owner", "role")
	mPortTxBytes = counter("swctl_port_sent_bytes_total", "Bytes of the frames the engine wrote to the port.", "port", "owner", "role")
	mPortDrops   = counter("swctl_port_dropped_frames_total", "Frames dropped at the port, by reason.", "port", "owner", "role", "reason")
	mPortErrors  = counter("swctl_port_errors_total", "Failed system calls on the port.", "port", "owner", "role")

	mFDBEntries  = gauge("swctl_bridge_fdb_entries", "Entries in the bridge's address table.", "bridge")
	mFDBEvents   = counter("swctl_bridge_fdb_events_total", "Address-table events: learned, moved, aged, exceeded (not learned: table full).", "bridge", "event")
	mBrFrames    = counter("swctl_bridge_frames_total", "Frames the bridge handled, by fate: received, forwarded (to one port), flooded, sent (copies written), span_sent.", "bridge", "fate")
	mBrDrops     = counter("swctl_bridge_dropped_frames_total", "Frames (at ingress) or copies (at egress) the bridge dropped, by reason.", "bridge", "reason")
	mBrOffload   = counter("swctl_bridge_software_offload_frames_total", "Frames whose offload the bridge did in software (finished), and the frames they became (segments).", "bridge", "kind")
	mCapSessions = gauge("swctl_bridge_capture_sessions", "Packet captures running on the bridge.", "bridge")
	mCapFrames   = counter("swctl_bridge_capture_frames_total", "Frames the bridge's captures copied for their clients (queued), and frames they dropped because a client did not keep up (dropped).", "bridge", "fate")
	mCapCut      = counter("swctl_bridge_capture_streams_cut_total", "Captures cut because their client read nothing for the stream's stall time.", "bridge")

	mSTPRoot    = gauge("swctl_bridge_stp_root", "1 while the bridge is the spanning tree's root.", "bridge")
	mSTPCost    = gauge("swctl_bridge_stp_root_path_cost", "The bridge's path cost to the root.", "bridge")
	mSTPChanges = counter("swctl_bridge_stp_topology_changes_total", "Topology changes the bridge's spanning tree has seen.", "bridge")
	mSTPRole    = gauge("swctl_bridge_stp_port_role", "1 for the role the port has: disabled, root, designated, alternate, backup.", "bridge", "port", "role")
	mSTPState   = gauge("swctl_bridge_stp_port_state", "1 for the state the port is in: discarding, learning, forwarding.", "bridge", "port", "state")
	mSTPBPDUs   = counter("swctl_bridge_stp_bpdus_total", "Valid BPDUs the port received (in) and sent (out).", "bridge", "port", "direction")

	mTrActive  = gauge("swctl_trunk_active", "1 while the trunk is active: enough members distribute, its carrier is up.", "trunk", "proto")
	mTrMembers = gauge("swctl_trunk_members", "Members of the trunk, by state: all, collecting, distributing, lacp_selected.", "trunk", "state")
	mTrMember  = gauge("swctl_trunk_member_state", "1 when the member is in the state: collecting, distributing, lacp_selected.", "trunk", "port", "state")
	mTrRx      = counter("swctl_trunk_received_frames_total", "Frames the trunk accepted from its members.", "trunk")
	mTrRxBytes = counter("swctl_trunk_received_bytes_total", "Bytes of the frames the trunk accepted.", "trunk")
	mTrTx      = counter("swctl_trunk_sent_frames_total", "Frames the trunk sent by its members.", "trunk")
	mTrTxBytes = counter("swctl_trunk_sent_bytes_total", "Bytes of the frames the trunk sent.", "trunk")
	mTrControl = counter("swctl_trunk_control_frames_total", "Slow-protocol frames (LACPDUs, markers) handed to the protocol.", "trunk")
	mTrDrops   = counter("swctl_trunk_dropped_frames_total", "Frames the trunk dropped, by reason.", "trunk", "reason")
	mTrOffload = counter("swctl_trunk_software_offload_frames_total", "Frames whose offload the trunk finished in software.", "trunk")

	mLBRunning  = gauge("swctl_lb_running", "1 while the load balancer's service runs on its port.", "lb")
	mLBFlows    = gauge("swctl_lb_flows", "Flows in the load balancer's connection table.", "lb")
	mLBBackends = gauge("swctl_lb_backends", "Backends of the load balancer, by state: all, serving, draining, down.", "lb", "state")
	mLBFrames   = counter("swctl_lb_forwarded_frames_total", "Frames to a VIP the load balancer forwarded to a backend.", "lb")
	mLBBytes    = counter("swctl_lb_forwarded_bytes_total", "Bytes of the frames the load balancer forwarded to backends.", "lb")
	mLBReplies  = counter("swctl_lb_replies_total", "Answers the load balancer sent for its VIPs, by protocol: arp, nd (neighbour advertisements).", "lb", "proto")
	mLBDrops    = counter("swctl_lb_dropped_frames_total", "Frames the load balancer dropped, by reason.", "lb", "reason")
	mLBBkState  = gauge("swctl_lb_backend_state", "1 for the state the backend is in for selection: serving, draining, down.", "lb", "backend", "state")
	mLBBkHealth = gauge("swctl_lb_backend_health", "1 for the backend's health-check state: unknown, up, down (absent without a check).", "lb", "backend", "health")
	mLBBkWeight = gauge("swctl_lb_backend_weight", "The backend's weight in selection.", "lb", "backend")
	mLBBkFrames = counter("swctl_lb_backend_forwarded_frames_total", "Frames the load balancer forwarded to the backend.", "lb", "backend")
	mLBBkBytes  = counter("swctl_lb_backend_forwarded_bytes_total", "Bytes of the frames the load balancer forwarded to the backend.", "lb", "backend")
)

// all lists every family, for Describe.
var all = []desc{mBuild, mUptime, mGoroutines, mPortUp, mPortRx, mPortRxBytes, mPortTx, mPortTxBytes, mPortDrops, mPortErrors,
	mFDBEntries, mFDBEvents, mBrFrames, mBrDrops, mBrOffload, mCapSessions, mCapFrames, mCapCut,
	mSTPRoot, mSTPCost, mSTPChanges, mSTPRole, mSTPState, mSTPBPDUs,
	mTrActive, mTrMembers, mTrMember, mTrRx, mTrRxBytes, mTrTx, mTrTxBytes, mTrControl, mTrDrops, mTrOffload,
	mLBRunning, mLBFlows, mLBBackends, mLBFrames, mLBBytes, mLBReplies, mLBDrops, mLBBkState, mLBBkHealth, mLBBkWeight, mLBBkFrames, mLBBkBytes}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range all {
		ch <- d.d
	}
}

// Collect implements prometheus.Collector: one Snapshot, every family.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	emit := func(d desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d.d, d.kind, v, labels...)
	}
	emit(mBuild, 1, c.build.Version, c.build.Revision, c.build.Go)
	emit(mUptime, c.now().Sub(c.start).Seconds())
	emit(mGoroutines, float64(runtime.NumGoroutine()))
	s := c.src()
	for _, p := range s.Ports {
		l := []string{p.Name, p.Owner, p.Role}
		cn := p.Counters
		emit(mPortUp, b2f(p.Up), l...)
		emit(mPortRx, float64(cn.RxPackets), l...)
		emit(mPortRxBytes, float64(cn.RxBytes), l...)
		emit(mPortTx, float64(cn.TxPackets), l...)
		emit(mPortTxBytes, float64(cn.TxBytes), l...)
		for _, r := range []struct {
			reason string
			n      uint64
		}{
			{"rx_invalid", cn.RxDropped - min(cn.RxBadOffload, cn.RxDropped)},
			{"rx_bad_offload", cn.RxBadOffload},
			{"rx_ring_full", cn.RingDropped},
			{"tx", cn.TxDropped},
		} {
			emit(mPortDrops, float64(r.n), append(l, r.reason)...)
		}
		emit(mPortErrors, float64(cn.Errors), l...)
	}
	for _, b := range s.Bridges {
		st := b.Stats
		emit(mFDBEntries, float64(b.Addresses), b.Name)
		for _, e := range []named{{"learned", st.Learned}, {"moved", st.Moved}, {"aged", st.Aged}, {"exceeded", st.Exceeded}} {
			emit(mFDBEvents, float64(e.n), b.Name, e.name)
		}
		for _, f := range []named{{"received", st.Received}, {"forwarded", st.Forwarded}, {"flooded", st.Flooded}, {"sent", st.Sent}, {"span_sent", st.SpanSent}} {
			emit(mBrFrames, float64(f.n), b.Name, f.name)
		}
		for _, r := range bridgeDrops(st) {
			emit(mBrDrops, float64(r.n), b.Name, r.name)
		}
		emit(mBrOffload, float64(st.SoftwareOffload), b.Name, "finished")
		emit(mBrOffload, float64(st.Segments), b.Name, "segments")
		emit(mCapSessions, float64(b.Capture.Sessions), b.Name)
		emit(mCapFrames, float64(b.Capture.Queued), b.Name, "queued")
		emit(mCapFrames, float64(b.Capture.Dropped), b.Name, "dropped")
		emit(mCapCut, float64(b.Capture.Cut), b.Name)
		if t := b.STP; t != nil {
			emit(mSTPRoot, b2f(t.IsRoot), b.Name)
			emit(mSTPCost, float64(t.RootPathCost), b.Name)
			emit(mSTPChanges, float64(t.TopologyChanges), b.Name)
			for _, p := range t.Ports {
				for _, r := range stpRoles {
					emit(mSTPRole, b2f(p.Role == r), b.Name, p.Name, r)
				}
				for _, st := range stpStates {
					emit(mSTPState, b2f(p.State == st), b.Name, p.Name, st)
				}
				emit(mSTPBPDUs, float64(p.BPDUsIn), b.Name, p.Name, "in")
				emit(mSTPBPDUs, float64(p.BPDUsOut), b.Name, p.Name, "out")
			}
		}
	}
	for _, t := range s.Trunks {
		st := t.Stats
		emit(mTrActive, b2f(t.Active), t.Name, t.Proto)
		var coll, dist, sel int
		for _, m := range t.Members {
			emit(mTrMember, b2f(m.Collecting), t.Name, m.Name, "collecting")
			emit(mTrMember, b2f(m.Distributing), t.Name, m.Name, "distributing")
			coll += b2i(m.Collecting)
			dist += b2i(m.Distributing)
			if m.LACP {
				emit(mTrMember, b2f(m.Selected), t.Name, m.Name, "lacp_selected")
				sel += b2i(m.Selected)
			}
		}
		emit(mTrMembers, float64(len(t.Members)), t.Name, "all")
		emit(mTrMembers, float64(coll), t.Name, "collecting")
		emit(mTrMembers, float64(dist), t.Name, "distributing")
		if t.Proto == string(trunk.ProtoLACP) {
			emit(mTrMembers, float64(sel), t.Name, "lacp_selected")
		}
		emit(mTrRx, float64(st.RxPackets), t.Name)
		emit(mTrRxBytes, float64(st.RxBytes), t.Name)
		emit(mTrTx, float64(st.TxPackets), t.Name)
		emit(mTrTxBytes, float64(st.TxBytes), t.Name)
		emit(mTrControl, float64(st.RxControl), t.Name)
		for _, r := range []named{{"rx_not_collecting", st.RxRefused}, {"tx_no_member", st.TxNoPort}, {"tx_invalid", st.TxInvalid},
			{"tx_member_refused", st.TxMemberDropped}, {"tx_queue_overflow", st.TxQueueOverflow}, {"tx_queue_stale", st.TxQueueStale},
			{"offload", st.OffloadDropped}} {
			emit(mTrDrops, float64(r.n), t.Name, r.name)
		}
		emit(mTrOffload, float64(st.SoftOffload), t.Name)
	}
	for _, l := range s.LBs {
		collectLB(l, emit)
	}
}

// collectLB emits one load balancer's families.
func collectLB(l LB, emit func(d desc, v float64, labels ...string)) {
	st := l.Status
	emit(mLBRunning, b2f(l.Running), l.Name)
	emit(mLBFlows, float64(st.Flows), l.Name)
	emit(mLBFrames, float64(st.Frames), l.Name)
	emit(mLBBytes, float64(st.Bytes), l.Name)
	emit(mLBReplies, float64(st.ARPReplies), l.Name, "arp")
	emit(mLBReplies, float64(st.NAReplies), l.Name, "nd")
	for _, r := range []named{{"no_backend", st.NoBackend}, {"unresolved", st.Unresolved}, {"malformed_arp", st.BadARP},
		{"malformed_nd", st.BadND}, {"malformed_ip", st.BadIP}, {"send_error", st.SendErrors}} {
		emit(mLBDrops, float64(r.n), l.Name, r.name)
	}
	byState := map[string]int{}
	for _, b := range st.Backends {
		addr, state := b.Addr.String(), b.State.String()
		byState[state]++
		for _, s := range lbBackendStates {
			emit(mLBBkState, b2f(state == s), l.Name, addr, s)
		}
		if b.Health != "none" {
			for _, h := range lbHealthStates {
				emit(mLBBkHealth, b2f(b.Health == h), l.Name, addr, h)
			}
		}
		emit(mLBBkWeight, float64(b.Weight), l.Name, addr)
		emit(mLBBkFrames, float64(b.Frames), l.Name, addr)
		emit(mLBBkBytes, float64(b.Bytes), l.Name, addr)
	}
	emit(mLBBackends, float64(len(st.Backends)), l.Name, "all")
	for _, s := range lbBackendStates {
		emit(mLBBackends, float64(byState[s]), l.Name, s)
	}
}

// named is a counter value with its label value.
type named struct {
	name string
	n    uint64
}

// bridgeDrops is every drop counter of a bridge, by reason.
func bridgeDrops(st bridge.Stats) []named {
	return []named{
		{"runt", st.DroppedRunt}, {"link_local", st.DroppedLinkLocal}, {"bad_source", st.DroppedBadSource},
		{"block_non_ip", st.DroppedBlockNonIP}, {"same_port", st.DroppedSamePort},
		{"block_non_ip_egress", st.DroppedBlockNonIPOut}, {"oversize", st.DroppedOversize},
		{"link_down", st.DroppedLinkDown}, {"offload", st.DroppedOffload},
		{"stp_discarding", st.DroppedDiscarding}, {"stp_discarding_egress", st.DroppedDiscardingOut},
		{"storm", st.DroppedStorm},
	}
}

func b2f(b bool) float64 { return float64(b2i(b)) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
