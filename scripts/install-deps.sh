#!/usr/bin/env bash
# Installs the Debian packages swctl's tests, demo and benchmarks use.
# Safe to run again: it installs only what is missing. Needs root (or sudo).
set -euo pipefail

# openvswitch-switch: the LACP interop test runs its own ovsdb-server and
# ovs-vswitchd (userspace datapath) inside a test namespace, with private
# database, sockets and pidfiles, so it neither needs nor touches the
# host's Open vSwitch. On a machine where installing the package starts the
# host's openvswitch-switch service (systemd without a policy-rc.d that
# forbids it), that service keeps running on its own files
# (/etc/openvswitch, /var/run/openvswitch) and does not disturb the test.
# mandoc: the manual pages' test lints docs/man with mandoc -T lint.
# nginx-light, curl: the lb tests' backends and client (integration/lb_linux_test.go).
# wrk nginx-light haproxy nftables curl: the regress suite's HTTP load
# balancing (make bench-lb) runs nginx, HAProxy and nft in its own
# namespaces and wrk and curl against them; installing them starts no
# service it needs (the suite starts its own processes).
# linux-perf: profiling the daemons and the kernel under load (perf record
# -g -p PID, perf stat -e 'syscalls:sys_enter_*'), as issue 14's diagnosis
# did.
pkgs=(iproute2 iputils-ping ethtool tcpdump tshark iperf3 netsniff-ng arping kmod openvswitch-switch procps util-linux git mandoc
	wrk nginx-light haproxy nftables curl linux-perf)
# --bench is accepted for old callers; everything is in the default list.

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null; then SUDO=sudo; else
		echo "install-deps: need root to install: ${missing[*]}" >&2
		exit 1
	fi
fi
echo "install-deps: installing ${missing[*]}" >&2
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
