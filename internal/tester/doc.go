// Package tester opens the counting traffic tester of the harnesses
// (make bench, make regress) across a network-namespace testbed: a
// send-only generator port in one namespace and, at the far end, an
// interface whose rx_packets counter says how many frames arrived, as a
// hardware tester's port counts them. Nothing at the far end reads
// frames, so the tester's receiving side takes no CPU from the path it
// measures. It is Linux only (AF_PACKET, netlink); the harnesses' Linux
// files use it.
package tester
