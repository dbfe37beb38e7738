// Package regress is swctl's regress and benchmark suite: it compares
// throughput and CPU cost with and without a patch to swctl, the way an
// OpenBSD developer tested a promiscuous-mode diff (iperf through a plain
// interface, a trunk and a bridge, PROMISC and -PROMISC, patch and no
// patch, several runs each, one table per metric).
//
// The pieces have one job each: Trees builds the "patch" and "no patch"
// binaries (from the tree, a temporary git worktree with a diff applied, or
// a base revision); the runner builds a network-namespace testbed per setup
// and drives both binaries in interleaved runs (A B B A ...); ParseProcStat
// and the CPU deltas give whole-machine system and interrupt time;
// Summarize and Compare give the statistics (means as in the original
// tables, plus median, min, max, stddev and a Mann-Whitney U test);
// RenderTable prints the tables; WriteReport writes results.json,
// report.md and SVG charts.
//
// The runner is Linux-only (network namespaces); everything else is
// portable and unit-tested without root.
package regress
