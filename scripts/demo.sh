#!/usr/bin/env bash
# make demo: three hosts on one swctl bridge, in network namespaces.
#
#   h1:eth0 ---- p1 \
#   h2:eth0 ---- p2 -- [dut: swctl daemon, bridge0] 
#   h3:eth0 ---- p3 /
#
# Shows pings crossing the bridge, the learned MAC table and the port
# counters, then removes everything it made (also on Ctrl-C or failure).
set -euo pipefail

SWCTL=${1:-bin/swctl}
SWCTL=$(readlink -f "$SWCTL")
[[ $(id -u) -eq 0 ]] || { echo "demo: needs root (network namespaces)" >&2; exit 1; }

tag="d$$"
dut="swdut$tag"; hosts=("swh1$tag" "swh2$tag" "swh3$tag")
work=$(mktemp -d /tmp/swctl-demo.XXXXXX)
sock="$work/swctl.sock"
daemon_pid=""

cleanup() {
	set +e
	[[ -n "$daemon_pid" ]] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	for ns in "$dut" "${hosts[@]}"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

say "building the testbed: namespaces ${hosts[*]} and $dut"
ip netns add "$dut"
nsx "$dut" ip link set lo up
for i in 1 2 3; do
	h=${hosts[$((i - 1))]}
	ip netns add "$h"
	nsx "$h" ip link set lo up
	nsx "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip link add "p$i$tag" type veth peer name "e$i$tag"
	ip link set "p$i$tag" netns "$dut"
	ip link set "e$i$tag" netns "$h"
	nsx "$dut" ip link set "p$i$tag" name "p$i"
	nsx "$dut" ip link set "p$i" up
	nsx "$h" ip link set "e$i$tag" name eth0 address "02:00:00:00:00:0$i"
	nsx "$h" ip addr add "10.77.0.$i/24" dev eth0
	nsx "$h" ip link set eth0 up
	# The hosts keep their default offloads: swctl carries partial
	# checksums and GSO super-frames through with PACKET_VNET_HDR.
done
nsx "$dut" sysctl -qw net.ipv6.conf.all.disable_ipv6=1

say "starting swctl daemon in $dut"
ip netns exec "$dut" "$SWCTL" daemon --socket "$sock" --config "$work/swctl.conf" --state-dir "$work/state" \
	2> "$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do [[ -S "$sock" ]] && break; sleep 0.05; done
sw() { echo "# swctl $*"; nsx "$dut" "$SWCTL" --socket "$sock" "$@"; }

say "creating bridge0 and adding p1 p2 p3"
sw bridge create bridge0
sw bridge add bridge0 p1 p2 p3
sw bridge show bridge0

say "pinging across the bridge"
nsx "${hosts[0]}" ping -c 3 -i 0.2 -W 2 10.77.0.2
nsx "${hosts[0]}" ping -c 3 -i 0.2 -W 2 10.77.0.3
nsx "${hosts[1]}" ping -c 3 -i 0.2 -W 2 10.77.0.3

say "the learned MAC table"
sw bridge addr bridge0

say "port counters"
sw port show

say "the configuration the daemon wrote"
cat "$work/swctl.conf"

say "daemon log"
cat "$work/daemon.log"
say "tearing down"
