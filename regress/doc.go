// Package regress is swctl's regress and benchmark suite: it compares
// throughput and CPU cost with and without a patch to swctl, the way an
// OpenBSD developer tested a promiscuous-mode diff (iperf through a plain
// interface, a trunk and a bridge, PROMISC and -PROMISC, patch and no
// patch, several runs each, one table per metric).
//
// The pieces have one job each: Trees builds the "patch" and "no patch"
// binaries (from the tree, a temporary git worktree with a diff applied, or
// a base revision); the runner builds a network-namespace testbed per setup
// and drives both binaries in interleaved runs (A B B A ...); package
// cpustat's parsers and deltas give whole-machine system and interrupt time;
// package stats gives the statistics (means as in the original
// tables, plus median, min, max, stddev and a Mann-Whitney U test);
// every table is a Table that RenderTable prints; WriteReport writes results.json,
// report.md and SVG charts.
//
// The forwarding-rate suite (RateSetups, AnalyzeRates, RateTables)
// drives package gen in-process: tester ports opened with AF_PACKET in
// two host namespaces, the counting tester (internal/tester: a send-only
// generator, arrivals counted by the receiving interface's rx_packets)
// for a max-rate run, an RFC 2544 zero-loss search (gen/rfc2544) and a
// CPU-per-frame run at a fixed paced load per frame size, through a
// swctl bridge, a swctl trunk and the direct-veth baseline the CPU is
// netted against (NetCPU); in FULL mode also RFC 2544's frame-loss-rate
// steps (LossRateSteps), and per instance the window benchmark
// (BalanceNG's form, WindowTable), which needs the receiving tester.
// Every rate records what the generator was asked to offer, what it sent
// and what arrived (RateFigure), and says when the tester, not the
// device, set it.
//
// The message-size suite (MsgSizePlan, AnalyzeMsgSize, MsgSizeTable) runs
// iperf3 TCP with write sizes from 1 byte to 64 KiB (the netperf form)
// across a swctl bridge. Its tables and those of the loss-rate and window
// tests set patch beside no patch (pairTable, pairRow).
//
// The bulk-transfer suite (BulkPlan, AnalyzeBulk, BulkTable) runs iperf3
// across a swctl bridge with four host ports: one pair alone, two pairs at
// once (each, their sum, the sum over one pair) and a UDP stream at a
// fixed offered rate with its datagram loss (package iperf3 reads the
// results).
//
// Every chart (WriteCharts) draws a cell's mean with a whisker over the
// runs' min to max and a '*' where patch differs significantly, its
// legend beside the plot; report.md (Markdown) opens with each table's
// significant differences. Before the first cell Run prints the plan's
// expected length per suite (Estimate; DefaultConfig is make regress's
// default, planned under 45 minutes).
//
// The address-caching suite (RFC 2889 5.7 and 5.8: SearchCapacity,
// SearchLearningRate, RFC2889Table) sends learning frames from many
// source MACs (gen.AddressSender) into a swctl bridge and test frames back
// to them, and counts flooded copies at a monitor port: the capacity of
// the address table and the rate at which it learns.
//
// The HTTP load-balancing suite (LBConfig, LBPlan, AnalyzeLB,
// LBTable; SUITES=lb, make bench-lb) runs wrk (ParseWrk) against
// nginx in three backend namespaces on one L2 segment, directly and
// through swctl lb, nftables and HAProxy, and leads with the balancer's
// own CPU per request.
//
// Every testbed runs a command on a test host one way, through a Host:
// real test hosts (ParseHostsConfig, a regress.conf) over ssh, or `ip
// netns exec` for a namespace standing for one, and the netns testbeds'
// namespaces likewise; the command log (results.json's commands) records
// each as "[ssh dut1] CMD" or "[netns NS] CMD". A testbed records every
// change it makes and puts it back, newest first, also on Ctrl-C or
// failure. A real DUT's CPU is read through its transport: /proc/stat,
// or kern.cp_time on the BSDs (ParseCPTime).
//
// The comparison suite (ParseBenchFlags, RunBench; make bench through
// cmd/swctl-bench) measures one swctl binary beside direct veth, the Linux
// kernel bridge and Open vSwitch, rows interleaved. Its rows are setups
// of the forwarding-rate testbed (BenchSetups), its rates the same
// measurement as the forwarding-rate suite's (rate_samples in
// results.json), with ping and iperf3 beside them, into one table of
// medians, spreads and ratios against the kernel bridge and OVS.
//
// The netns testbed is Linux-only; the real-host path and everything else
// are portable, and unit-tested without root.
package regress
