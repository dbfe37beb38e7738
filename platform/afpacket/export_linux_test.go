package afpacket

// HoldTeardown makes p's Close run f between the moment every user has
// left and the teardown, for the external tests.
func HoldTeardown(p *Port, f func()) { p.teardown = f }
