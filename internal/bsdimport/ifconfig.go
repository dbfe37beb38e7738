package bsdimport

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/swctl/swctl/internal/config"
)

// keyword is an ifconfig(8) word the import knows, and how many words
// follow it.
type keyword struct {
	// args is how many words belong to it after the keyword itself.
	args int
	// more, when set, returns how many further words (after args) also
	// belong to it, for optional trailing words.
	more func(rest []string) int
	// apply translates it for o. It returns "" when it is translated, or
	// why it is not.
	apply func(im *Importer, o object, args []string) string
	// restOfLine makes the keyword take every word up to the end of the
	// line (its arguments have no fixed count).
	restOfLine bool
}

// Reasons for words that are not translated, shared by several keywords.
const (
	reasonSTP        = "not supported yet: swctl has no spanning tree"
	reasonAction     = "not translated: an action, not a setting; nothing to keep"
	reasonDescr      = "not translated: swctl.conf keeps no descriptions"
	reasonDown       = "not translated: swctl's bridges and trunks forward while the daemon runs; there is no down"
	reasonMTU        = "not translated: set the MTU on the member interfaces"
	reasonGroup      = "not translated: swctl has no interface groups"
	reasonRdomain    = "not translated: swctl has no routing domains"
	reasonLLPrio     = "not translated: swctl does not set link-layer priorities"
	reasonProtected  = "not supported yet: swctl has no protected ports"
	reasonLinkFlags  = "not supported: swctl has no bridge-wide multicast or IPsec flags"
	reasonRules      = "not supported: swctl has no bridge filter rules"
	reasonSticky     = "not supported yet: swctl has no sticky addresses"
	reasonPortMax    = "not supported yet: swctl has no per-port address limit"
	reasonVLAN       = "not supported yet: swctl's bridges do not filter VLANs"
	reasonBridgeMAC  = "not translated: a swctl bridge has no address of its own (its local TAP's is chosen by the daemon)"
	reasonFlowID     = "not translated: swctl hashes each frame's headers itself (see hash)"
	reasonNUMA       = "not translated: swctl does not place flows by NUMA domain"
	reasonRRLimit    = "not supported: swctl's roundrobin sends one frame per port in turn"
	reasonLACPStrict = "not supported yet: swctl has no LACP strict mode"
	reasonLACPTest   = "not supported: LACP test modes"
	reasonEndpoint   = "not supported: swctl has no tunnel endpoints"
	reasonUnknown    = "not translated: unknown to swctl config import (the rest of the line is not read)"
)

// done is the apply of a word that needs nothing in swctl.conf.
func done(*Importer, object, []string) string { return "" }

// refuse returns a keyword of n words that is never translated, for
// reason.
func refuse(n int, reason string) keyword {
	return keyword{args: n, apply: func(*Importer, object, []string) string { return reason }}
}

// refuseAll returns the same keyword for every name in names.
func refuseAll(kw keyword, names ...string) map[string]keyword {
	m := map[string]keyword{}
	for _, n := range names {
		m[n] = kw
	}
	return m
}

// merge returns one table holding every given table's keywords.
func merge(tables ...map[string]keyword) map[string]keyword {
	out := map[string]keyword{}
	for _, t := range tables {
		maps.Copy(out, t)
	}
	return out
}

// commonWords are understood on every bridge and trunk.
var commonWords = merge(
	map[string]keyword{
		"up":     {apply: done},
		"down":   refuse(0, reasonDown),
		"mtu":    refuse(1, reasonMTU),
		"group":  refuse(1, reasonGroup),
		"-group": refuse(1, reasonGroup),
		"llprio": refuse(1, reasonLLPrio),
	},
	refuseAll(refuse(1, reasonDescr), "description", "descr"),
	refuseAll(refuse(0, reasonDescr), "-description", "-descr"),
	refuseAll(refuse(1, reasonRdomain), "rdomain"),
	refuseAll(refuse(0, reasonRdomain), "-rdomain"),
	refuseAll(refuse(0, "not translated: host addresses are not swctl's to remove"), "-inet", "-inet6"),
)

// stpWords are the spanning tree words both systems share.
var stpWords = merge(
	refuseAll(refuse(1, reasonSTP), "stp", "-stp", "edge", "-edge", "autoedge", "-autoedge",
		"ptp", "-ptp", "autoptp", "-autoptp", "fwddelay", "hellotime", "maxage", "holdcnt", "proto"),
	refuseAll(refuse(2, reasonSTP), "ifpriority"),
)

// bridgeWords are understood on a bridge of either system.
var bridgeWords = merge(commonWords, stpWords,
	map[string]keyword{
		"learn":     {args: 1, apply: portFlag(func(p *config.Port) { p.Learning = true })},
		"-learn":    {args: 1, apply: portFlag(func(p *config.Port) { p.Learning = false })},
		"discover":  {args: 1, apply: portFlag(func(p *config.Port) { p.Discover = true })},
		"-discover": {args: 1, apply: portFlag(func(p *config.Port) { p.Discover = false })},
		"maxaddr":   {args: 1, apply: bridgeNumber("maxaddr", config.CheckMaxAddr, func(b *config.Bridge, n int) { b.MaxAddr = n })},
		"timeout":   {args: 1, apply: bridgeNumber("timeout", config.CheckTimeout, func(b *config.Bridge, n int) { b.Timeout = n })},
		"deladdr":   refuse(1, reasonAction),
		"flush":     refuse(0, reasonAction),
		"flushall":  refuse(0, reasonAction),
		"addr":      refuse(0, reasonAction),
		"lladdr":    refuse(1, reasonBridgeMAC),
	},
)

// openbsdBridgeWords are the words of bridge(4) and veb(4) in
// hostname.if(5) files.
var openbsdBridgeWords = merge(bridgeWords,
	map[string]keyword{
		"add":          {args: 1, apply: member("port", true)},
		"del":          {args: 1, apply: member("port", false)},
		"addspan":      {args: 1, apply: member("span", true)},
		"span":         {args: 1, apply: member("span", true)},
		"delspan":      {args: 1, apply: member("span", false)},
		"blocknonip":   {args: 1, apply: portFlag(func(p *config.Port) { p.BlockNonIP = true })},
		"-blocknonip":  {args: 1, apply: portFlag(func(p *config.Port) { p.BlockNonIP = false })},
		"static":       {args: 2, apply: func(im *Importer, o object, a []string) string { return im.addStatic(o, a[0], a[1], 0) }},
		"ifcost":       refuse(2, reasonSTP),
		"-ifcost":      refuse(1, reasonSTP),
		"spanpriority": refuse(1, reasonSTP),
		"protected":    refuse(2, reasonProtected),
		"-protected":   refuse(1, reasonProtected),
		"rule":         {restOfLine: true, apply: func(*Importer, object, []string) string { return reasonRules }},
		"rulefile":     refuse(1, reasonRules),
		"flushrule":    refuse(1, reasonRules),
		"endpoint":     refuse(2, reasonEndpoint),
		"addlocal": {args: 1, apply: func(im *Importer, o object, a []string) string {
			im.bridge(o.name).Local = true
			return fmt.Sprintf("partly translated: swctl gives the host the TAP %s (local) instead of %s; put %s's addresses on %s", o.name, a[0], a[0], o.name)
		}},
	},
	refuseAll(refuse(0, reasonLinkFlags), "link0", "-link0", "link1", "-link1", "link2", "-link2"),
)

// openbsdTrunkWords are the words of trunk(4) and aggr(4) in
// hostname.if(5) files.
var openbsdTrunkWords = merge(commonWords,
	map[string]keyword{
		"trunkport":   {args: 1, apply: member("port", true)},
		"-trunkport":  {args: 1, apply: member("port", false)},
		"trunkproto":  {args: 1, apply: trunkProto},
		"lacpmode":    {args: 1, apply: trunkSetting(config.CheckLACPMode, func(t *config.Trunk, v string) { t.LACPMode = v })},
		"lacptimeout": {args: 1, apply: trunkSetting(config.CheckLACPTimeout, func(t *config.Trunk, v string) { t.LACPTimeout = v })},
		"lladdr":      {args: 1, apply: trunkLLAddr},
	},
)

// freebsdBridgeWords are the words of if_bridge(4) in rc.conf(5).
var freebsdBridgeWords = merge(bridgeWords,
	map[string]keyword{
		"addm":    {args: 1, apply: member("port", true)},
		"deletem": {args: 1, apply: member("port", false)},
		"span":    {args: 1, apply: member("span", true)},
		"-span":   {args: 1, apply: member("span", false)},
		"static": {args: 2, more: vlanSuffix, apply: func(im *Importer, o object, a []string) string {
			vlan := 0
			if len(a) == 4 {
				n, err := strconv.Atoi(a[3])
				if err != nil || config.CheckVLAN(n) != nil {
					return fmt.Sprintf("not translated: vlan %q: want 0 to %d", a[3], config.MaxVLAN)
				}
				vlan = n
			}
			return im.addStatic(o, a[0], a[1], uint16(vlan))
		}},
		"priority":   refuse(1, reasonSTP),
		"ifpathcost": refuse(2, reasonSTP),
		"ifmaxaddr":  refuse(2, reasonPortMax),
		"ether":      refuse(1, reasonBridgeMAC),
		"link":       refuse(1, reasonBridgeMAC),
		"untagged":   refuse(2, reasonVLAN),
		"-untagged":  refuse(1, reasonVLAN),
		"tagged":     refuse(2, reasonVLAN),
		"+tagged":    refuse(2, reasonVLAN),
		"-tagged":    refuse(2, reasonVLAN),
	},
	refuseAll(refuse(1, reasonSticky), "sticky", "-sticky"),
	refuseAll(refuse(1, reasonProtected), "private", "-private"),
	refuseAll(refuse(0, reasonVLAN), "vlanfilter", "-vlanfilter"),
)

// freebsdLaggWords are the words of lagg(4) in rc.conf(5).
var freebsdLaggWords = merge(commonWords,
	map[string]keyword{
		"laggport":           {args: 1, apply: member("port", true)},
		"-laggport":          {args: 1, apply: member("port", false)},
		"laggproto":          {args: 1, apply: trunkProto},
		"lagghash":           {args: 1, apply: trunkSetting(config.CheckHash, func(t *config.Trunk, v string) { t.Hash, _ = config.CanonicalHash(v) })},
		"lacp_fast_timeout":  {apply: trunkFixed(func(t *config.Trunk) { t.LACPTimeout = config.LACPFast })},
		"-lacp_fast_timeout": {apply: trunkFixed(func(t *config.Trunk) { t.LACPTimeout = config.LACPSlow })},
		"flowid_shift":       refuse(1, reasonFlowID),
		"rr_limit":           refuse(1, reasonRRLimit),
		"lladdr":             {args: 1, apply: trunkLLAddr},
		"ether":              {args: 1, apply: trunkLLAddr},
		"link":               {args: 1, apply: trunkLLAddr},
	},
	refuseAll(refuse(0, reasonFlowID), "use_flowid", "-use_flowid"),
	refuseAll(refuse(0, reasonNUMA), "use_numa", "-use_numa"),
	refuseAll(refuse(0, reasonLACPStrict), "lacp_strict", "-lacp_strict"),
	refuseAll(refuse(0, reasonLACPTest), "lacp_txtest", "-lacp_txtest", "lacp_rxtest", "-lacp_rxtest"),
)

// vlanSuffix counts FreeBSD's optional "vlan N" after a static entry.
func vlanSuffix(rest []string) int {
	if len(rest) >= 2 && rest[0] == "vlan" {
		return 2
	}
	return 0
}

// member adds (add) or removes iface as a member in role.
func member(role string, add bool) func(*Importer, object, []string) string {
	return func(im *Importer, o object, a []string) string {
		if add {
			return im.addMember(o, role, a[0])
		}
		return im.delMember(o, role, a[0])
	}
}

// portFlag changes a flag of the bridge port named by the argument.
func portFlag(set func(*config.Port)) func(*Importer, object, []string) string {
	return func(im *Importer, o object, a []string) string {
		p, why := im.port(o, a[0])
		if p != nil {
			set(p)
		}
		return why
	}
}

// parseNumber reads an unsigned number as strtoul(3) with base 0 does.
func parseNumber(s string) (int, error) {
	n, err := strconv.ParseUint(s, 0, 31)
	if err != nil || strings.Contains(s, "_") {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return int(n), nil
}

// bridgeNumber sets a numeric bridge setting checked by check.
func bridgeNumber(what string, check func(int) error, set func(*config.Bridge, int)) func(*Importer, object, []string) string {
	return func(im *Importer, o object, a []string) string {
		n, err := parseNumber(a[0])
		if err != nil {
			return fmt.Sprintf("not translated: %s: %v", what, err)
		}
		if err := check(n); err != nil {
			return "not translated: " + err.Error()
		}
		set(im.bridge(o.name), n)
		return ""
	}
}

// trunkSetting sets a trunk setting checked by check.
func trunkSetting(check func(string) error, set func(*config.Trunk, string)) func(*Importer, object, []string) string {
	return func(im *Importer, o object, a []string) string {
		if err := check(a[0]); err != nil {
			return "not translated: " + err.Error()
		}
		set(im.trunk(o.name), a[0])
		return ""
	}
}

// trunkFixed applies a trunk setting that takes no value.
func trunkFixed(set func(*config.Trunk)) func(*Importer, object, []string) string {
	return func(im *Importer, o object, _ []string) string {
		set(im.trunk(o.name))
		return ""
	}
}

// trunkProto sets the protocol: trunk(4) and lagg(4) name them as swctl.
var trunkProto = trunkSetting(config.CheckProto, func(t *config.Trunk, v string) { t.Proto = v })

// trunkLLAddr sets the trunk's hardware address.
func trunkLLAddr(im *Importer, o object, a []string) string {
	m, err := parseMAC(a[0])
	if err != nil {
		return "not translated: " + err.Error() + " (swctl takes the first port's address when none is given)"
	}
	if m.IsZero() || m.IsMulticast() {
		return fmt.Sprintf("not translated: %s is not a station's address", m)
	}
	im.trunk(o.name).LLAddr = m
	return ""
}

// Host address words: the host's own addressing, never translated.
var (
	// hostAddressWords start a host address; the first four take a value.
	hostAddressWords = []string{"inet", "inet6", "dest", "netmask", "broadcast", "prefixlen",
		"alias", "-alias", "dhcp", "DHCP", "SYNCDHCP", "NOSYNCDHCP", "WPA", "autoconf", "-autoconf", "eui64"}
	// hostAddressValued are the words of hostAddressWords and of an
	// address's options that take a value.
	hostAddressValued = []string{"inet", "inet6", "dest", "netmask", "broadcast", "prefixlen", "vltime", "pltime", "vhid"}
	// hostAddressFlags are options of an address without a value.
	hostAddressFlags = []string{"alias", "-alias", "anycast", "-anycast", "tentative", "-tentative",
		"deprecated", "-deprecated", "eui64", "autoconf", "-autoconf", "NONE"}
)

// isAddress reports whether w is an IPv4 or IPv6 address or prefix, or a
// hexadecimal netmask (0xffffff00).
func isAddress(w string) bool {
	if _, err := netip.ParsePrefix(w); err == nil {
		return true
	}
	if _, err := netip.ParseAddr(w); err == nil {
		return true
	}
	_, err := strconv.ParseUint(strings.TrimPrefix(w, "0x"), 16, 32)
	return strings.HasPrefix(w, "0x") && err == nil
}

// hostAddressLen returns how many of words, from the first, give the host
// an address ("inet 192.0.2.1/24 alias", "inet 192.0.2.1 255.255.255.0
// NONE", "DHCP", a bare "192.0.2.1/24"), or 0 when words[0] does not
// start one.
func hostAddressLen(words []string) int {
	w := words[0]
	n := 1
	switch {
	case slices.Contains(hostAddressValued, w):
		n = min(2, len(words))
	case slices.Contains(hostAddressWords, w), isAddress(w):
	default:
		return 0
	}
	for n < len(words) {
		switch w := words[n]; {
		case slices.Contains(hostAddressValued, w) && n+1 < len(words):
			n += 2
		case slices.Contains(hostAddressFlags, w), isAddress(w):
			n++
		default:
			return n
		}
	}
	return n
}

// hostAddress notes words that give the host an address on o. A bridge
// gets a local TAP, which is how swctl puts the host on a bridge.
func (im *Importer) hostAddress(o object, text string) {
	reason := fmt.Sprintf("not translated: a host address; put it on the trunk's TAP %s with the system's network configuration", o.name)
	if o.kind == kindBridge {
		im.bridge(o.name).Local = true
		reason = fmt.Sprintf("not translated: a host address; swctl gives the host the TAP %s (local): put the address on it with the system's network configuration", o.name)
	}
	im.note(o.at, text, reason)
}

// apply interprets the ifconfig words of one line for o, as ifconfig
// would, in order: each keyword with its arguments, and each host
// address, is translated or noted; an unknown word ends the line with one
// note, since how many words it takes is unknown.
func (im *Importer) apply(o object, words []string, table map[string]keyword) {
	for i := 0; i < len(words); {
		w := words[i]
		if n := hostAddressLen(words[i:]); n > 0 {
			im.hostAddress(o, joinWords(words[i:i+n]))
			i += n
			continue
		}
		kw, ok := table[w]
		switch {
		case !ok:
			im.note(o.at, joinWords(words[i:]), reasonUnknown)
			return
		case kw.restOfLine:
			im.note(o.at, joinWords(words[i:]), kw.apply(im, o, words[i+1:]))
			return
		case i+1+kw.args > len(words):
			im.note(o.at, joinWords(words[i:]), fmt.Sprintf("not translated: %s wants %d more words", w, kw.args))
			return
		}
		n := kw.args
		if kw.more != nil {
			n += kw.more(words[i+1+n:])
		}
		if why := kw.apply(im, o, words[i+1:i+1+n]); why != "" {
			im.note(o.at, joinWords(words[i:i+1+n]), why)
		}
		i += 1 + n
	}
}

// joinWords writes words back as a line, quoting those that need it, so
// that a note shows them as written.
func joinWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		if w == "" || strings.ContainsAny(w, " \t#'") {
			out[i] = `"` + w + `"`
		}
	}
	return strings.Join(out, " ")
}
