#!/usr/bin/env bash
# make bench: frames/s through swctl's bridge and through the Linux kernel
# bridge, measured side by side in one run on the same testbed:
#
#   h1:eth0 ---- p1 [dut: bridge] p2 ---- h2:eth0
#
# trafgen in h1 (pinned to CPU 0) sends UDP frames of 60 and 1514 bytes
# (RFC 2544's 64 and 1518 with the 4-byte FCS veth does not carry) at
# maximum rate to h2's MAC; delivered = h2's eth0 rx_packets delta. CPU is
# the whole machine's /proc/stat delta (2 cores: 50% = one core busy).
# Rows alternate kernel, swctl, kernel, swctl ... so drift hits both alike.
#
# Environment: RUNS (default 3), SECONDS_PER_RUN (default 5), SIZES
# (default "60 1514").
set -euo pipefail

SWCTL=$(readlink -f "${1:-bin/swctl}")
RUNS=${RUNS:-3}
DUR=${SECONDS_PER_RUN:-5}
SIZES=${SIZES:-"60 1514"}
[[ $(id -u) -eq 0 ]] || { echo "bench: needs root (network namespaces)" >&2; exit 1; }
command -v trafgen >/dev/null || { echo "bench: needs trafgen (Debian package netsniff-ng): make deps" >&2; exit 1; }

tag="b$$"
h1="swbh1$tag"; h2="swbh2$tag"; dut="swbdut$tag"
work=$(mktemp -d /tmp/swctl-bench.XXXXXX)
daemon_pid=""
MAC1=02:00:00:00:b1:01; MAC2=02:00:00:00:b1:02

cleanup() {
	set +e
	stop_swctl
	for ns in "$h1" "$h2" "$dut"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

for ns in "$h1" "$h2" "$dut"; do
	ip netns add "$ns"
	nsx "$ns" ip link set lo up
	nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
cable() { # host mac dutport
	ip link add "x$3$tag" type veth peer name "y$3$tag"
	ip link set "x$3$tag" netns "$1"; ip link set "y$3$tag" netns "$dut"
	nsx "$1" ip link set "x$3$tag" name eth0 address "$2"
	nsx "$dut" ip link set "y$3$tag" name "$3"
	nsx "$1" ip link set eth0 up; nsx "$dut" ip link set "$3" up
	nsx "$1" ethtool -K eth0 tx off gso off >/dev/null 2>&1 || true
}
cable "$h1" $MAC1 p1
cable "$h2" $MAC2 p2
nsx "$h1" ip addr add 10.99.0.1/24 dev eth0
nsx "$h2" ip addr add 10.99.0.2/24 dev eth0
nsx "$h1" ip neigh replace 10.99.0.2 lladdr $MAC2 nud permanent dev eth0
nsx "$h2" ip neigh replace 10.99.0.1 lladdr $MAC1 nud permanent dev eth0

start_kernel() {
	nsx "$dut" ip link add br0 type bridge
	nsx "$dut" ip link set p1 master br0
	nsx "$dut" ip link set p2 master br0
	nsx "$dut" ip link set br0 up
}
stop_kernel() { nsx "$dut" ip link del br0 2>/dev/null || true; }
start_swctl() {
	rm -f "$work/sock" "$work/conf"
	ip netns exec "$dut" "$SWCTL" daemon --socket "$work/sock" --config "$work/conf" --state-dir "$work/state" 2>>"$work/daemon.log" &
	daemon_pid=$!
	for _ in $(seq 200); do [[ -S "$work/sock" ]] && break; sleep 0.05; done
	nsx "$dut" "$SWCTL" --socket "$work/sock" bridge create bridge0 >/dev/null
	nsx "$dut" "$SWCTL" --socket "$work/sock" bridge add bridge0 p1 p2 >/dev/null
}
stop_swctl() {
	if [[ -n "$daemon_pid" ]]; then kill "$daemon_pid" 2>/dev/null; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""; fi
}

# Both bridges learn h2 on p2 before the measured frames flow.
learn() { nsx "$h2" ping -c 2 -i 0.2 -W 1 10.99.0.1 >/dev/null 2>&1 || true; }

cfg_for() { # size
	local fill=$(($1 - 42))
	echo "{ eth(da=$MAC2, sa=$MAC1), ipv4(saddr=10.99.0.1, daddr=10.99.0.2, ttl=64), udp(sp=4000, dp=9), fill(0x00, $fill) }" >"$work/t$1.cfg"
}
cpu() { head -1 /proc/stat; }
rxp() { nsx "$h2" cat /sys/class/net/eth0/statistics/rx_packets; }

# measure SIZE -> "frames_per_s user% sys% softirq% irq%"
measure() {
	local size=$1 r0 r1 c0 c1
	r0=$(rxp); c0=$(cpu)
	nsx "$h1" taskset -c 0 timeout -s INT "$DUR" trafgen -P 1 --no-sock-mem -Q -C -i "$work/t$size.cfg" -o eth0 >/dev/null 2>&1 || true
	sleep 0.5
	r1=$(rxp); c1=$(cpu)
	awk -v r0="$r0" -v r1="$r1" -v d="$DUR" -v a="$c0" -v b="$c1" 'BEGIN {
		split(a, x, " "); split(b, y, " "); tot = 0
		for (i = 2; i <= 11; i++) { dd[i] = y[i] - x[i]; tot += dd[i] }
		printf "%.0f %.1f %.1f %.1f %.1f\n", (r1 - r0) / d, 100*dd[2]/tot, 100*dd[4]/tot, 100*dd[8]/tot, 100*dd[7]/tot
	}'
}

for s in $SIZES; do cfg_for "$s"; done
: >"$work/results"
echo "bench: $RUNS runs of ${DUR}s per row, sizes $SIZES; trafgen on CPU 0" >&2
for run in $(seq "$RUNS"); do
	for path in kernel swctl; do
		"start_$path"; learn
		for s in $SIZES; do
			echo "$path $s $(measure "$s")" >>"$work/results"
			printf '  run %d %-6s %5d B: %s\n' "$run" "$path" "$s" "$(tail -1 "$work/results" | cut -d' ' -f3-)" >&2
		done
		"stop_$path"
	done
done

echo
echo "Frames/s delivered h1 -> dut -> h2 at maximum offered load (median of $RUNS; min-max)"
echo "CPU: whole machine, $(nproc) cores ($((100 / $(nproc)))% = one core busy); interrupts = irq + softirq (veth: softirq only)"
echo "CPU ns/frame = whole-machine busy time (generator, forwarder and receiver together) per delivered frame"
awk -v ncpu="$(nproc)" '
{ k = $1 " " $2; n[k]++; v[k, n[k]] = $3; u[k] += $4; sy[k] += $5; si[k] += $6; ir[k] += $7 }
function median(k,   i, j, t, m, a) {
	m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	lo[k] = a[1]; hi[k] = a[m]
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	printf "%-14s %6s %12s %23s %7s %6s %6s %9s %13s\n", "path", "frame", "frames/s", "min-max", "ratio", "user%", "sys%", "softirq%", "CPU ns/frame"
	split("60 64 1514 1518", rfc, " ")
	for (s = 1; s <= 3; s += 2) {
		size = rfc[s]; label = rfc[s + 1]
		kk = "kernel " size; km = (kk in n) ? median(kk) : 0
		for (p = 1; p <= 2; p++) {
			path = (p == 1) ? "kernel" : "swctl"; k = path " " size
			if (!(k in n)) continue
			m = median(k)
			busy = (u[k] + sy[k] + si[k] + ir[k]) / n[k]
			printf "%-14s %4dB %12.0f %11.0f-%-11.0f %6.2fx %6.1f %6.1f %9.1f %13.0f\n", (p == 1 ? "kernel bridge" : "swctl bridge"), label, m, lo[k], hi[k], (km > 0 ? m / km : 0), u[k]/n[k], sy[k]/n[k], si[k]/n[k], (m > 0 ? busy / 100 * ncpu * 1e9 / m : 0)
		}
	}
}' "$work/results"
