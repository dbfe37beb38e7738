package tap

import "testing"

func TestTapUnit(t *testing.T) {
	for _, c := range []struct {
		name string
		unit int
		ok   bool
	}{
		{"tap0", 0, true},
		{"tap7", 7, true},
		{"tap255", 255, true},
		{"tap256", 0, false}, // above maxUnit
		{"tap", 0, false},
		{"tap01", 0, false},
		{"tap-1", 0, false},
		{"tap1a", 0, false},
		{"tun0", 0, false},
		{"bridge0", 0, false},
		{"Tap0", 0, false},
		{"tap99999999999999999999", 0, false},
		{"", 0, false},
	} {
		unit, ok := tapUnit(c.name)
		if unit != c.unit || ok != c.ok {
			t.Errorf("tapUnit(%q) = %d, %v; want %d, %v", c.name, unit, ok, c.unit, c.ok)
		}
	}
}

func TestTapDevice(t *testing.T) {
	for n, want := range map[int]string{0: "/dev/tap0", 12: "/dev/tap12"} {
		if got := tapDevice(n); got != want {
			t.Errorf("tapDevice(%d) = %q, want %q", n, got, want)
		}
		if u, ok := tapUnit(tapDevice(n)[len("/dev/"):]); !ok || u != n {
			t.Errorf("tapUnit of %s's name = %d, %v; want %d", tapDevice(n), u, ok, n)
		}
	}
}

func TestAliasDevice(t *testing.T) {
	for name, want := range map[string]string{
		"bridge0": "/dev/bridge0",
		"trunk0":  "/dev/trunk0",
		"":        "",
		".":       "",
		"..":      "",
		"a/b":     "",
		"x\x00y":  "",
	} {
		if got := aliasDevice(name); got != want {
			t.Errorf("aliasDevice(%q) = %q, want %q", name, got, want)
		}
	}
}
