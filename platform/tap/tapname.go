package tap

import (
	"strconv"
	"strings"
)

// maxUnit bounds the unit numbers of the TAP devices tried, /dev/tap0 to
// /dev/tap255 (OpenBSD's MAKEDEV makes a few; more are made by hand).
const maxUnit = 255

// tapUnit returns N for the name of a TAP interface the kernel named,
// "tapN" (N in decimal, no leading zero, at most maxUnit); false for any
// other name.
func tapUnit(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "tap")
	if !ok || digits == "" || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > maxUnit {
		return 0, false
	}
	return n, true
}

// tapDevice is the device node of TAP unit n.
func tapDevice(n int) string { return "/dev/tap" + strconv.Itoa(n) }

// aliasDevice is the device node FreeBSD's tap(4) makes for a TAP renamed
// to name (an alias of its /dev/tapN), "" when name cannot be one: a path
// must stay a single name under /dev.
func aliasDevice(name string) string {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return ""
	}
	return "/dev/" + name
}
