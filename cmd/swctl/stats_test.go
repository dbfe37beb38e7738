package main

import "github.com/swctl/swctl/internal/api"

// testSamples are what the fake daemon's Stats returns: a few samples of
// every section, out of order, as a daemon could send them.
var testSamples = []api.Sample{
	{Name: "swctl_port_received_frames_total", Labels: map[string]string{"port": "eth2", "owner": "bridge0", "role": "member"}, Value: 7},
	{Name: "swctl_port_dropped_frames_total", Labels: map[string]string{"port": "eth1", "owner": "bridge0", "role": "member", "reason": "rx_ring_full"}, Value: 3},
	{Name: "swctl_port_dropped_frames_total", Labels: map[string]string{"port": "eth1", "owner": "bridge0", "role": "member", "reason": "tx"}, Value: 0},
	{Name: "swctl_port_received_frames_total", Labels: map[string]string{"port": "eth1", "owner": "bridge0", "role": "member"}, Value: 1234567},
	{Name: "swctl_bridge_fdb_entries", Labels: map[string]string{"bridge": "bridge0"}, Value: 2},
	{Name: "swctl_bridge_dropped_frames_total", Labels: map[string]string{"bridge": "bridge0", "reason": "runt"}, Value: 1},
	{Name: "swctl_trunk_member_state", Labels: map[string]string{"trunk": "trunk0", "port": "eth5", "state": "collecting"}, Value: 1},
	{Name: "swctl_lb_backend_forwarded_frames_total", Labels: map[string]string{"lb": "web", "backend": "192.0.2.11"}, Value: 40},
	{Name: "swctl_lb_dropped_frames_total", Labels: map[string]string{"lb": "web", "reason": "no_backend"}, Value: 2},
	{Name: "swctl_lb_backend_state", Labels: map[string]string{"lb": "web", "backend": "192.0.2.11", "state": "serving"}, Value: 1},
	{Name: "swctl_build_info", Labels: map[string]string{"version": "v0.1.0", "revision": "abc", "goversion": "go1.26"}, Value: 1},
	{Name: "swctl_uptime_seconds", Value: 12.25},
}
