package main

import "github.com/swctl/swctl/platform"

// benchPort is a port swctl bench sends or counts frames on: the
// generator waits for its link with gen.WaitLinkUp, which sets it.
// openBenchPort (one per OS) opens it: AF_PACKET on Linux, bpf on OpenBSD
// and FreeBSD; rx is set for the receiving port, which gets a larger
// buffer where the backend has a choice.
type benchPort interface {
	platform.Port
	platform.LinkSetter
}
