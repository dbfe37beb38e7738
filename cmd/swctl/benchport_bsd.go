//go:build openbsd || freebsd

package main

import "github.com/swctl/swctl/platform/bpf"

// openBenchPort opens a bpf port with the default buffer, the largest the
// kernel grants by default on OpenBSD (2 MiB; FreeBSD clamps it to its
// net.bpf.maxbufsize, 512 KiB unless raised).
func openBenchPort(name string, rx bool) (benchPort, error) {
	p, err := bpf.Open(name, bpf.Options{})
	if err != nil {
		return nil, err
	}
	return p, nil
}
