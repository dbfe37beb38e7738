// Package benchtable is the model and the table of `make bench`
// (cmd/swctl-bench): the rows (paths through the device under test), the
// metrics measured on each, one Sample per row, run and metric, and the
// arithmetic that turns samples into the printed table: medians with
// their min–max spread, ratios against the Linux kernel bridge and Open
// vSwitch's userspace datapath, and the CPU cost per forwarded frame net
// of the direct-veth baseline.
//
// Nothing here measures: the comparison suite in package regress (run by cmd/swctl-bench) does, and hands
// its samples over. So the table is unit-tested with known samples and a
// golden file, without root.
package benchtable
