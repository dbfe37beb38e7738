#!/usr/bin/env bash
# make bench-trunk: what a two-port swctl trunk gives over one link, and
# what a failover and an LACP negotiation cost. Two systems, A and B, each a
# network namespace running its own swctl daemon:
#
#   A: s0 ------------------------------ s0 :B    plain veth, addresses, no swctl
#   A: trunk0 [swctl] a1 ---------- b1 [swctl] trunk0 :B
#                     a2 ---------- b2
#
# veth has no line rate, so every link is shaped on both ends with
# `tc qdisc add dev X root tbf rate 500mbit burst 64kb latency 50ms`.
# Throughput: iperf3 -P 8 (TCP, 8 flows) for 10 s from A's address to B's,
# over the single shaped link, then over a roundrobin, a loadbalance and an
# lacp (fast) trunk, and an Open vSwitch userspace bond between two OVS
# instances (one in A, one in B) over the same shaped links, balance-tcp
# with active LACP and balance-slb (other_config:userspace-tso-enable=true,
# without which OVS carries nothing with default offloads), rows
# interleaved run by run so drift hits all alike; median and min-max of
# the receiver's rate, ratio to the single link, the whole machine's CPU
# from /proc/stat over each run, and the RTT under load: the average of a
# ping every 100 ms along the same path while iperf3 runs.
# Unshaped: TCP between the two loadbalance trunks' host interfaces with
# the links' tbf removed, offloads off (tx, gso on the TAPs) and default,
# beside a swctl bridge row in the same run (a bridge with a --local TAP
# on each side, one member each, a1 and b1).
# Offloads: the hosts' defaults (checksum offload, TSO, GSO) on both trunk0
# TAPs and both ends of s0: swctl's trunk TAP carries virtio headers, so
# super-frames cross it whole. OFFLOADS=off turns tx checksumming and GSO
# off on those interfaces (the form of the tables before the TAP carried
# them).
# Failover: a failover trunk, `ping -i 0.001` (one every ms) for 3 s, the
# active link (a1, so its peer b1 too: a pulled cable) goes down at 1 s;
# lost = sent - answered; and the same when it comes back. LACP: time from
# `trunk create` on A (B follows at once) until all four ports are
# collecting and distributing, with fast timers.
#
# Environment: RUNS (default 3), SECONDS_PER_RUN (default 10), RATE
# (default 500mbit), LOSS_RUNS (default 5), PROTOS (default
# "roundrobin loadbalance lacp"), OVS_MODES (default "balance-tcp
# balance-slb"; empty, or Open vSwitch not installed: no OVS rows),
# UNSHAPED (default 1; 0: no unshaped rows), OFFLOADS (default, or off),
# TRUNK_ARGS (more `trunk create` flags for the shaped trunk rows, e.g.
# "--send-buffer 1048576" to compare queue settings run against run),
# DAEMON_ARGS (more `swctl daemon` flags for both daemons, e.g.
# "--coalesce 0"),
# STATS (set: after each shaped or unshaped row, the softirqs per second
# by kind, the bytes per second the sender's qdiscs dequeued, their drops and overlimits, both daemons' CPU time per
# GB delivered, and how much of the wall time (times the cores) /proc/stat
# accounted for: with tick-based accounting and no IRQ_TIME_ACCOUNTING,
# interrupt and softirq time on an otherwise idle core is in none of its
# fields, so a row whose work is mostly softirq on idle cores looks
# cheaper than it is).
set -euo pipefail

SWCTL=$(readlink -f "${1:-bin/swctl}")
RUNS=${RUNS:-3}
DUR=${SECONDS_PER_RUN:-10}
RATE=${RATE:-500mbit}
LOSS_RUNS=${LOSS_RUNS:-5}
PROTOS=${PROTOS:-"roundrobin loadbalance lacp"}
OVS_MODES=${OVS_MODES-"balance-tcp balance-slb"}
UNSHAPED=${UNSHAPED:-1}
OFFLOADS=${OFFLOADS:-default}
read -r -a trunk_args <<<"${TRUNK_ARGS:-}"
read -r -a daemon_args <<<"${DAEMON_ARGS:-}"
[[ $(id -u) -eq 0 ]] || { echo "bench-trunk: needs root (network namespaces)" >&2; exit 1; }
for tool in iperf3 ethtool tc ping; do
	command -v "$tool" >/dev/null || { echo "bench-trunk: needs $tool: make deps" >&2; exit 1; }
done
[[ -x "$SWCTL" ]] || { echo "bench-trunk: no swctl binary at $SWCTL: make build" >&2; exit 1; }
for tool in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl; do
	if [[ -n "$OVS_MODES" ]] && ! command -v "$tool" >/dev/null; then
		echo "bench-trunk: no $tool (make deps installs openvswitch-switch): no OVS rows" >&2
		OVS_MODES=""
	fi
done

tag="t$$"
A="swbtA$tag"; B="swbtB$tag"
work=$(mktemp -d /tmp/swctl-bench-trunk.XXXXXX)
declare -A daemon_pid=()
IP_S_A=10.98.0.1; IP_S_B=10.98.0.2   # single link
IP_T_A=10.98.1.1; IP_T_B=10.98.1.2   # trunk0 TAPs

nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
ns_of() { if [[ $1 == A ]]; then echo "$A"; else echo "$B"; fi; }
sw() { local side=$1; shift; "$SWCTL" --socket "$work/$side.sock" "$@"; }

stop_daemon() { # side
	local pid=${daemon_pid[$1]:-}
	if [[ -n "$pid" ]]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		daemon_pid[$1]=""
	fi
}
# stop_ovs SIDE: ends that side's ovs-vswitchd and ovsdb-server by their
# pidfiles.
stop_ovs() {
	local d f pid
	d="$work/ovs$1/run"
	for f in ovs-vswitchd ovsdb-server; do
		[[ -s "$d/$f.pid" ]] || continue
		pid=$(cat "$d/$f.pid")
		kill "$pid" 2>/dev/null || continue
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$pid" 2>/dev/null || true
	done
}
cleanup() {
	set +e
	[[ -f "$work/iperf3.pid" ]] && kill "$(cat "$work/iperf3.pid")" 2>/dev/null
	stop_ovs A; stop_ovs B
	stop_daemon A; stop_daemon B
	ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

for ns in "$A" "$B"; do
	ip netns add "$ns"
	nsx "$ns" ip link set lo up
	nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
shape() { nsx "$1" tc qdisc replace dev "$2" root tbf rate "$RATE" burst 64kb latency 50ms; }
cable() { # nameA macA nameB macB
	ip link add "x$tag" type veth peer name "y$tag"
	ip link set "x$tag" netns "$A"; ip link set "y$tag" netns "$B"
	nsx "$A" ip link set "x$tag" name "$1" address "$2"
	nsx "$B" ip link set "y$tag" name "$3" address "$4"
	nsx "$A" ip link set "$1" up; nsx "$B" ip link set "$3" up
	shape "$A" "$1"; shape "$B" "$3"
}
cable s0 02:5a:00:00:00:01 s0 02:5b:00:00:00:01
cable a1 02:a0:00:00:00:01 b1 02:b0:00:00:00:01
cable a2 02:a0:00:00:00:02 b2 02:b0:00:00:00:02
nsx "$A" ip addr add $IP_S_A/24 dev s0
nsx "$B" ip addr add $IP_S_B/24 dev s0
if [[ $OFFLOADS == off ]]; then
	for ns in "$A" "$B"; do nsx "$ns" ethtool -K s0 tx off gso off >/dev/null 2>&1; done
fi
nsx "$A" ip neigh replace $IP_S_B lladdr 02:5b:00:00:00:01 nud permanent dev s0
nsx "$B" ip neigh replace $IP_S_A lladdr 02:5a:00:00:00:01 nud permanent dev s0

start_daemon() { # side
	local side=$1
	rm -f "$work/$side.sock" "$work/$side.conf"
	ip netns exec "$(ns_of "$side")" "$SWCTL" daemon --socket "$work/$side.sock" --config "$work/$side.conf" \
		--state-dir "$work/$side.state" "${daemon_args[@]}" 2>>"$work/$side.log" &
	daemon_pid[$side]=$!
	for _ in $(seq 200); do sw "$side" trunk show >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "bench-trunk: daemon $side did not start:" >&2; cat "$work/$side.log" >&2; exit 1
}
start_daemon A
start_daemon B

# Trunk rows: create trunk0 on both sides with args, address the TAPs
# (offloads as OFFLOADS says), pin the neighbours, wait for traffic.
make_trunks() { # args...
	sw A trunk create trunk0 --port a1 --port a2 "$@" >/dev/null
	sw B trunk create trunk0 --port b1 --port b2 "$@" >/dev/null
	setup_taps trunk0 "$OFFLOADS"
}
# setup_taps DEV OFFLOADS: address the host interface DEV on both sides
# (trunk0, bridge0 or OVS's br0), offloads off or as the host has them,
# and pin the neighbours.
setup_taps() {
	local dev=$1 offloads=$2 side ns ip
	for side in A B; do
		ns=$(ns_of $side); ip=$IP_T_A; [[ $side == B ]] && ip=$IP_T_B
		for _ in $(seq 100); do nsx "$ns" ip link show "$dev" >/dev/null 2>&1 && break; sleep 0.05; done
		nsx "$ns" ip addr add "$ip/24" dev "$dev"
		nsx "$ns" ip link set "$dev" up
		if [[ $offloads == off ]]; then nsx "$ns" ethtool -K "$dev" tx off gso off >/dev/null 2>&1; fi
	done
	nsx "$A" ip neigh replace $IP_T_B lladdr "$(nsx "$B" cat /sys/class/net/"$dev"/address)" nud permanent dev "$dev"
	nsx "$B" ip neigh replace $IP_T_A lladdr "$(nsx "$A" cat /sys/class/net/"$dev"/address)" nud permanent dev "$dev"
}
# ports SIDE: that side's two link ends.
ports() { if [[ $1 == A ]]; then echo "a1 a2"; else echo "b1 b2"; fi; }

# Open vSwitch rows: a private OVS (ovsdb-server and ovs-vswitchd with the
# userspace datapath, files under $work/ovsSIDE) in each namespace, as
# integration/ovs_linux_test.go runs it; a row makes br0 with a bond of
# the side's two links, and takes it away again.
ovsx() { # side cmd...: run cmd in the side's namespace with OVS's private directories
	local side=$1 d="$work/ovs$1"; shift
	nsx "$(ns_of "$side")" env OVS_RUNDIR="$d/run" OVS_DBDIR="$d/db" OVS_LOGDIR="$d/log" OVS_SYSCONFDIR="$d/etc" "$@"
}
vsctl() { local side=$1; shift; ovsx "$side" ovs-vsctl --db="unix:$work/ovs$side/run/db.sock" --timeout=20 "$@"; }
start_ovs() { # side
	local side=$1 d="$work/ovs$1" schema=${OVS_PKGDATADIR:-/usr/share/openvswitch}/vswitch.ovsschema
	mkdir -p "$d/run" "$d/db" "$d/log" "$d/etc"
	ovsx "$side" ovsdb-tool create "$d/db/conf.db" "$schema"
	ovsx "$side" ovsdb-server "$d/db/conf.db" --remote="punix:$d/run/db.sock" --pidfile="$d/run/ovsdb-server.pid" \
		--unixctl="$d/run/ovsdb-server.ctl" --log-file="$d/log/ovsdb-server.log" -vconsole:off --detach --no-chdir 2>>"$d/log/start.err"
	vsctl "$side" --no-wait init
	# Read when ovs-vswitchd starts.
	vsctl "$side" --no-wait set Open_vSwitch . other_config:userspace-tso-enable=true
	ovsx "$side" ovs-vswitchd "unix:$d/run/db.sock" --pidfile="$d/run/ovs-vswitchd.pid" --unixctl="$d/run/ovs-vswitchd.ctl" \
		--log-file="$d/log/ovs-vswitchd.log" -vconsole:off --detach --no-chdir 2>>"$d/log/start.err"
}
make_ovs_bonds() { # bond_mode
	local side bond=(bond_mode="$1")
	[[ $1 == balance-tcp ]] && bond+=(lacp=active other_config:lacp-time=fast)
	for side in A B; do
		vsctl "$side" add-br br0 -- set bridge br0 datapath_type=netdev
		# shellcheck disable=SC2046 # the two port names
		vsctl "$side" add-bond br0 bond0 $(ports "$side") "${bond[@]}"
	done
	# ovs-vswitchd takes the root qdisc (tbf) of a port it adds or
	# removes away: shape its links again.
	reshape
	setup_taps br0 "$OFFLOADS"
}
destroy_ovs_bonds() { vsctl A del-br br0; vsctl B del-br br0; reshape; }

# Unshaped rows: the links without tbf, then shaped again.
unshape() { local side p; for side in A B; do for p in $(ports $side); do nsx "$(ns_of $side)" tc qdisc del dev "$p" root 2>/dev/null || true; done; done; }
reshape() { local side p; for side in A B; do for p in $(ports $side); do shape "$(ns_of $side)" "$p"; done; done; }
# shaped: every link end still has its tbf, else the row just measured
# is not a shaped one and the run stops.
shaped() {
	local side p
	for side in A B; do
		for p in s0 $(ports $side); do
			nsx "$(ns_of $side)" tc qdisc show dev "$p" root | grep -q '^qdisc tbf ' && continue
			echo "bench-trunk: $side's $p lost its tbf: the row is not a shaped one" >&2
			return 1
		done
	done
}
make_bridges() { # a swctl bridge with a local TAP on each side, a1 and b1 its members
	sw A bridge create bridge0 --local >/dev/null; sw A bridge add bridge0 a1 >/dev/null
	sw B bridge create bridge0 --local >/dev/null; sw B bridge add bridge0 b1 >/dev/null
	setup_taps bridge0 default
}
destroy_bridges() { sw A bridge destroy bridge0 >/dev/null; sw B bridge destroy bridge0 >/dev/null; }
destroy_trunks() { sw A trunk destroy trunk0 >/dev/null; sw B trunk destroy trunk0 >/dev/null; }
# drops SIDE: that side's trunk0 ports' transmit drops, summed: the ports'
# own (TX-DROP), and their backlogs' (Q-OVERFLOW, Q-STALE).
drops() {
	sw "$1" trunk show trunk0 | awk '$1 ~ /^[ab][0-9]+$/ && NF == 15 { d += $10; o += $14; s += $15 } END { printf "tx-drop %d, backlog overflow %d, stale %d", d, o, s }'
}
# count_flag SIDE WORD: how many trunk0 ports show WORD in their FLAGS column.
count_flags() {
	sw "$1" trunk show trunk0 | awk -v w="$2" '$1 ~ /^[ab][0-9]+$/ { n = split($4, f, ","); for (i = 1; i <= n; i++) if (f[i] == w) { c++; break } } END { print c + 0 }'
}
distributing_both() { [[ $(count_flags A distributing) -eq 2 && $(count_flags B distributing) -eq 2 ]]; }
wait_for() { # seconds cmd...: poll every 20 ms
	local deadline=$(($(date +%s%N) + $1 * 1000000000)); shift
	until "$@"; do
		(($(date +%s%N) < deadline)) || return 1
		sleep 0.02
	done
}
reachable() { nsx "$A" ping -c 1 -W 1 "$1" >/dev/null 2>&1; }

cpu() { head -1 /proc/stat; }
# softirqs -> "TIMER NET_TX NET_RX HRTIMER": /proc/softirqs summed over CPUs.
softirqs() { awk '$1 ~ /^(TIMER|NET_TX|NET_RX|HRTIMER):$/ { s = 0; for (i = 2; i <= NF; i++) s += $i; v[$1] = s } END { print v["TIMER:"], v["NET_TX:"], v["NET_RX:"], v["HRTIMER:"] }' /proc/softirqs; }
# daemon_ticks -> both swctl daemons' user+system clock ticks, threads included.
daemon_ticks() {
	local t=0 pid
	for pid in "${daemon_pid[@]}"; do
		[[ -n "$pid" && -r /proc/$pid/stat ]] || continue
		t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat")))
	done
	echo $t
}
# qdisc_sent DEV... -> packets, bytes, drops and overlimits (dequeues
# that found the head packet without tokens and set tbf's watchdog timer)
# of the sender's (A's) root qdiscs on DEVs.
qdisc_sent() {
	local d
	for d in "$@"; do nsx "$A" tc -s qdisc show dev "$d" root; done |
		awk '/^ Sent / { b += $2; p += $4; dr += $7; o += $9 } END { print p + 0, b + 0, dr + 0, o + 0 }'
}
# iperf DST -> "mbps user% sys% softirq% irq% rtt-ms": the RTT is the
# average of a ping every 100 ms to DST while iperf3 runs (-1: none
# answered).
iperf() {
	local c0 c1 out mbps pp rtt s0 s1 d0 d1 q0 q1 w0 w1 devs="s0"
	[[ $1 == "$IP_S_B" ]] || devs="a1 a2"
	# shellcheck disable=SC2086 # the device names
	q0=$(qdisc_sent $devs); s0=$(softirqs); d0=$(daemon_ticks)
	c0=$(cpu); w0=$(date +%s%N)
	nsx "$A" ping -q -i 0.1 -w "$DUR" "$1" >"$work/rtt" 2>&1 & pp=$!
	out=$(nsx "$A" iperf3 -c "$1" -P 8 -t "$DUR" -f m 2>&1) || { echo "bench-trunk: iperf3 to $1 failed: $out" >&2; wait $pp || true; echo "0 0 0 0 0 -1 0"; return; }
	c1=$(cpu); w1=$(date +%s%N)
	# shellcheck disable=SC2086 # the device names
	d1=$(daemon_ticks); s1=$(softirqs); q1=$(qdisc_sent $devs)
	wait $pp || true
	rtt=$(awk -F/ '/^rtt|^round-trip/ { print $5 + 0; f = 1 } END { if (!f) print -1 }' "$work/rtt")
	mbps=$(awk '/\[SUM\]/ && / receiver$/ { v = $(NF - 2) } END { print v + 0 }' <<<"$out")
	if [[ -n ${STATS:-} ]]; then
		awk -v m="$mbps" -v d="$DUR" -v s0="$s0" -v s1="$s1" -v q0="$q0" -v q1="$q1" -v t=$((d1 - d0)) -v hz="$(getconf CLK_TCK)" \
			-v c0="$c0" -v c1="$c1" -v wall=$((w1 - w0)) -v ncpu="$(nproc)" 'BEGIN {
			split(s0, a, " "); split(s1, b, " "); split(q0, p, " "); split(q1, q, " ")
			split(c0, x, " "); split(c1, y, " "); tot = 0
			for (i = 2; i <= 11; i++) tot += y[i] - x[i]
			gb = m * d / 8000; if (gb <= 0) gb = 1
			# Bytes, not the packet count of the qdisc: a super-frame a daemon
			# sends through a packet socket counts as 0 packets there (the
			# kernel leaves its gso_segs for the device to compute).
			mb = (q[2] - p[2]) / 1e6; if (mb <= 0) mb = 1
			printf "      softirqs/s TIMER %d NET_TX %d NET_RX %d HRTIMER %d; sender qdiscs %.0f MB/s, %d drops/s, %d overlimits/s (%.0f per MB); daemons %.0f ms CPU per GB; /proc/stat accounts for %.0f%% of the wall time\n",
				(b[1]-a[1])/d, (b[2]-a[2])/d, (b[3]-a[3])/d, (b[4]-a[4])/d, mb/d, (q[3]-p[3])/d, (q[4]-p[4])/d, (q[4]-p[4])/mb, 1000*t/hz/gb, 100*tot/(wall/1e9*hz*ncpu)
		}' >&2
	fi
	awk -v m="$mbps" -v a="$c0" -v b="$c1" -v r="$rtt" -v wall=$((w1 - w0)) -v hz="$(getconf CLK_TCK)" -v ncpu="$(nproc)" 'BEGIN {
		split(a, x, " "); split(b, y, " "); tot = 0
		for (i = 2; i <= 11; i++) { dd[i] = y[i] - x[i]; tot += dd[i] }
		w = wall / 1e9 * hz * ncpu
		printf "%s %.1f %.1f %.1f %.1f %s %.1f\n", m, 100*dd[2]/tot, 100*dd[4]/tot, 100*dd[8]/tot, 100*dd[7]/tot, r, 100*(w - dd[5] - dd[6])/w
	}'
}
# row KEY DST: one iperf row, recorded and shown.
row() {
	echo "$1 $(iperf "$2")" >>"$work/tput"
	printf '  run %d %-16s %s\n' "$run" "$1" "$(tail -1 "$work/tput" | cut -d' ' -f2-)" >&2
}
nsx "$B" iperf3 -s -D --pidfile "$work/iperf3.pid" >/dev/null
for _ in $(seq 100); do [[ -s "$work/iperf3.pid" ]] && break; sleep 0.05; done

load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$work/tput"
if [[ $OFFLOADS == off ]]; then offloads_said="offloads off (tx, gso) on the TAPs and s0"; else offloads_said="the hosts' default offloads"; fi
echo "bench-trunk: $RUNS runs of ${DUR}s per row (iperf3 -P 8), links shaped to $RATE (tbf, both ends); $offloads_said" >&2
if [[ -n "$OVS_MODES" ]]; then start_ovs A; start_ovs B; fi
for run in $(seq "$RUNS"); do
	wait_for 5 reachable $IP_S_B || { echo "bench-trunk: single link does not answer" >&2; exit 1; }
	row single $IP_S_B
	shaped || exit 1
	for proto in $PROTOS; do
		args=(--proto "$proto" "${trunk_args[@]}")
		[[ $proto == lacp ]] && args+=(--lacp-timeout fast)
		make_trunks "${args[@]}"
		if [[ $proto == lacp ]]; then
			wait_for 15 distributing_both || { echo "bench-trunk: LACP did not reach distributing" >&2; sw A trunk show >&2; exit 1; }
		fi
		wait_for 10 reachable $IP_T_B || { echo "bench-trunk: trunk0 ($proto) does not answer" >&2; exit 1; }
		row "$proto" $IP_T_B
		shaped || exit 1
		echo "      A: $(drops A); B: $(drops B)" >&2
		destroy_trunks
	done
	for mode in $OVS_MODES; do
		make_ovs_bonds "$mode"
		wait_for 15 reachable $IP_T_B || { echo "bench-trunk: OVS br0 ($mode) does not answer" >&2; vsctl A show >&2; exit 1; }
		row "ovs-$mode" $IP_T_B
		shaped || exit 1
		destroy_ovs_bonds
	done
	if [[ $UNSHAPED == 1 ]]; then
		unshape
		for off in off default; do
			sw A trunk create trunk0 --port a1 --port a2 --proto loadbalance >/dev/null
			sw B trunk create trunk0 --port b1 --port b2 --proto loadbalance >/dev/null
			setup_taps trunk0 $off
			wait_for 10 reachable $IP_T_B || { echo "bench-trunk: unshaped trunk0 does not answer" >&2; exit 1; }
			row "unshaped-lb-$off" $IP_T_B
			destroy_trunks
		done
		make_bridges
		wait_for 10 reachable $IP_T_B || { echo "bench-trunk: bridge0 does not answer" >&2; exit 1; }
		row unshaped-bridge $IP_T_B
		destroy_bridges
		reshape
	fi
done

# Failover: lost replies of a 1 ms ping across the active link going down
# at 1 s, then across it coming back (the primary takes over again).
: >"$work/loss"
make_trunks --proto failover
a_active() { sw A trunk show trunk0 | awk '$1 == "a1" && $4 ~ /(^|,)active(,|$)/ { f = 1 } END { exit !f }'; }
b_active() { sw B trunk show trunk0 | awk '$1 == "b1" && $4 ~ /(^|,)active(,|$)/ { f = 1 } END { exit !f }'; }
primaries_active() { a_active && b_active; }
# ping3 -> lost frames of a 3 s, 1 ms ping (3000 requests)
ping3() {
	local out
	out=$(nsx "$A" ping -q -c 3000 -i 0.001 -W 1 $IP_T_B 2>&1 || true)
	awk '/packets transmitted/ { print $1 - $4 }' <<<"$out"
}
echo "bench-trunk: failover, $LOSS_RUNS runs: ping every 1 ms for 3 s, a1 down (then up) at 1 s" >&2
for run in $(seq "$LOSS_RUNS"); do
	wait_for 10 primaries_active || { echo "bench-trunk: a1/b1 not active" >&2; exit 1; }
	wait_for 10 reachable $IP_T_B || { echo "bench-trunk: failover trunk does not answer" >&2; exit 1; }
	ping3 >"$work/p" & pp=$!
	sleep 1; nsx "$A" ip link set a1 down
	wait $pp; echo "down $(cat "$work/p")" >>"$work/loss"
	ping3 >"$work/p" & pp=$!
	sleep 1; nsx "$A" ip link set a1 up
	wait $pp; echo "up $(cat "$work/p")" >>"$work/loss"
	printf '  run %d: lost %s on link down, %s on link up\n' "$run" "$(grep '^down' "$work/loss" | tail -1 | cut -d' ' -f2)" "$(grep '^up' "$work/loss" | tail -1 | cut -d' ' -f2)" >&2
done
destroy_trunks

# LACP: time from trunk create until collecting+distributing on all four ports.
echo "bench-trunk: LACP (fast) negotiation, $LOSS_RUNS runs" >&2
for run in $(seq "$LOSS_RUNS"); do
	t0=$(date +%s%N)
	sw A trunk create trunk0 --port a1 --port a2 --proto lacp --lacp-timeout fast >/dev/null
	sw B trunk create trunk0 --port b1 --port b2 --proto lacp --lacp-timeout fast >/dev/null
	wait_for 30 distributing_both || { echo "bench-trunk: LACP did not reach distributing in 30 s" >&2; exit 1; }
	t1=$(date +%s%N)
	echo "nego $(((t1 - t0) / 1000000))" >>"$work/loss"
	printf '  run %d: %d ms\n' "$run" $(((t1 - t0) / 1000000)) >&2
	destroy_trunks
done

echo
echo "swctl trunks between two namespaces, 2 veth links each shaped to $RATE (tbf on both ends); $(nproc) cores"
echo "Throughput: iperf3 -P 8 TCP, ${DUR}s, A -> B, median of $RUNS (min-max); receiver's rate"
[[ -n ${TRUNK_ARGS:-} ]] && echo "Trunks created with: $TRUNK_ARGS"
[[ -n ${DAEMON_ARGS:-} ]] && echo "Daemons started with: $DAEMON_ARGS"
if [[ $OFFLOADS == off ]]; then
	echo "Offloads: tx checksumming and GSO/TSO off on both trunk0 TAPs and on the single link's ends"
else
	echo "Offloads: the hosts' defaults (checksum offload, TSO, GSO) on both trunk0 TAPs, which carry virtio headers, and on the single link's ends"
fi
echo "Load average (1, 5, 15 min) at the start: $load0; at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews every row)"
echo "CPU: whole machine over the run ($((100 / $(nproc)))% = one core busy); interrupts = irq + softirq (veth: softirq only); CPU/Gbps: user+sys+softirq+irq per Gb/s delivered (the means over the runs, by the median rate), and its ratio to the single link's; wall/Gbps: the same with busy = the wall time (times the cores) less idle and iowait, which also counts interrupt and softirq time on idle cores that tick-based accounting leaves out of every /proc/stat field"
echo "RTT under load: average of a ping every 100 ms along the row's path while iperf3 runs; OVS rows: two Open vSwitch userspace bonds (netdev datapath, userspace-tso-enable=true) over the same shaped links"
ovs_keys=""; for mode in $OVS_MODES; do ovs_keys+=" ovs-$mode"; done
awk -v runs="$RUNS" -v lruns="$LOSS_RUNS" -v protos="$PROTOS" -v ovs="$ovs_keys" -v ncpu="$(nproc)" '
function median(key,   i, j, t, m, a) {
	m = n[key]; for (i = 1; i <= m; i++) a[i] = v[key, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	lo[key] = a[1]; hi[key] = a[m]
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
FILENAME ~ /tput$/ { k = $1; n[k]++; v[k, n[k]] = $2; u[k] += $3; sy[k] += $4; si[k] += $5; ir[k] += $6; bw[k] += $8; n[k "/rtt"]++; v[k "/rtt", n[k "/rtt"]] = $7; next }
{ k = $1; n[k]++; v[k, n[k]] = $2 }
function label(k) {
	if (k == "single") return "single shaped link"
	if (k ~ /^ovs-/) return "OVS bond " substr(k, 5) (k == "ovs-balance-tcp" ? " lacp" : "")
	if (k == "unshaped-lb-off") return "unshaped lb, offloads off"
	if (k == "unshaped-lb-default") return "unshaped lb, offloads on"
	if (k == "unshaped-bridge") return "unshaped swctl bridge"
	return "swctl " k (k == "lacp" ? " (fast)" : "") " trunk"
}
function row(k, base,   m, r) {
	if (!(k in n)) return
	m = median(k); r = median(k "/rtt")
	c = (m > 0 ? (u[k] + sy[k] + si[k] + ir[k]) / n[k] / (m / 1000) : 0)
	cw = (m > 0 ? bw[k] / n[k] / (m / 1000) : 0)
	if (k == "single") { cbase = c; cwbase = cw }
	printf "%-28s %10.0f %8.0f-%-8.0f %6.2fx %6.1f %6.1f %9.1f %6.1f %8s %8.1f %6.2fx %8.1f %6.2fx\n", label(k), m, lo[k], hi[k], (base > 0 ? m / base : 0), u[k]/n[k], sy[k]/n[k], si[k]/n[k], ir[k]/n[k], (r < 0 ? "-" : sprintf("%.1f", r)), c, (cbase > 0 ? c / cbase : 0), cw, (cwbase > 0 ? cw / cwbase : 0)
}
END {
	printf "%-28s %10s %17s %7s %6s %6s %9s %6s %8s %8s %7s %9s %7s\n", "row", "Mb/s", "min-max", "ratio", "user%", "sys%", "softirq%", "irq%", "RTT ms", "CPU/Gbps", "ratio", "wall/Gbps", "ratio"
	single = median("single")
	np = split("single " protos " " ovs, rows, " ")
	for (r = 1; r <= np; r++) row(rows[r], single)
	if ("unshaped-bridge" in n) {
		printf "%-28s (ratio to the unshaped swctl bridge row)\n", "unshaped links:"
		bridge = median("unshaped-bridge")
		row("unshaped-bridge", bridge); row("unshaped-lb-off", bridge); row("unshaped-lb-default", bridge)
	}
	printf "%-26s %10s %17s\n", "", "median", "min-max"
	if ("down" in n) { m = median("down"); printf "%-26s %10d %8d-%-8d frames lost, ping every 1 ms, %d runs\n", "failover: active link down", m, lo["down"], hi["down"], n["down"] }
	if ("up" in n)   { m = median("up");   printf "%-26s %10d %8d-%-8d frames lost, ping every 1 ms, %d runs\n", "failover: link back up", m, lo["up"], hi["up"], n["up"] }
	if ("nego" in n) { m = median("nego"); printf "%-26s %10d %8d-%-8d ms to collecting+distributing on both ends, %d runs\n", "LACP (fast) negotiation", m, lo["nego"], hi["nego"], n["nego"] }
}' "$work/tput" "$work/loss"
