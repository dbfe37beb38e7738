package main

import "github.com/swctl/swctl/platform/afpacket"

// openBenchPort opens an AF_PACKET port; the receiving one gets a ring
// four times the default, so a burst waits in it instead of being lost.
func openBenchPort(name string, rx bool) (benchPort, error) {
	opts := afpacket.Options{}
	if rx {
		opts.BlockCount = 4 * afpacket.DefaultBlockCount
	}
	p, err := afpacket.Open(name, opts)
	if err != nil {
		return nil, err
	}
	return p, nil
}
