package bsdimport

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/swctl/swctl/frame"
	"github.com/swctl/swctl/internal/config"
)

// MaxLineLen bounds one line of an input file, and one value after sh
// expansion, so that a binary file given by mistake is refused rather
// than read whole.
const MaxLineLen = 64 * 1024

// Note is input that was not translated: where it is, what it says and
// why swctl cannot follow it.
type Note struct {
	// File is the input file, as given.
	File string
	// Line is the 1-based line number.
	Line int
	// Text is the words not translated, as written.
	Text string
	// Reason says why.
	Reason string
}

func (n Note) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", n.File, n.Line, n.Text, n.Reason)
}

// place is where a word was read.
type place struct {
	// file is the input file.
	file string
	// line is the 1-based line number.
	line int
}

func (p place) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// objectKind is what an imported interface becomes.
type objectKind int

const (
	kindBridge objectKind = iota + 1
	kindTrunk
)

func (k objectKind) String() string {
	if k == kindBridge {
		return "bridge"
	}
	return "trunk"
}

// object is the bridge or trunk a word applies to, and where the word is.
type object struct {
	// kind is what it is.
	kind objectKind
	// name is its name in the configuration.
	name string
	// at is where the word being applied was read.
	at place
}

// use records what an interface is in the imported configuration.
type use struct {
	// kind is the kind of its owner.
	kind objectKind
	// owner is the bridge or trunk it belongs to.
	owner string
	// role is "port" or "span".
	role string
	// at is where it was added.
	at place
}

// objectIndex locates a bridge or trunk in the configuration.
type objectIndex struct {
	// kind says whether i indexes Bridges or Trunks.
	kind objectKind
	// i is the index.
	i int
}

// staticKey identifies a static entry of a bridge.
type staticKey struct {
	// bridge is the bridge's name.
	bridge string
	// mac and vlan are the entry's address and VLAN.
	mac  frame.MAC
	vlan uint16
}

// Importer builds one swctl configuration from BSD files. Give it files
// with HostnameIf and RCConf, then call Result once.
type Importer struct {
	// cfg is the configuration built so far.
	cfg config.Config
	// objects maps the name of each bridge and trunk of cfg to its kind
	// and its index in cfg.Bridges or cfg.Trunks.
	objects map[string]objectIndex
	// uses maps an interface to its role in cfg.
	uses map[string]use
	// statics records where each static entry was given.
	statics map[staticKey]place
	// notes are the untranslated words so far.
	notes []Note
	// files are the input files in the order they were read, which is
	// the order of the notes.
	files []string
	// rc holds the assignments of the rc.conf files read, applied by
	// Result.
	rc rcVars
}

// New returns an Importer with nothing imported yet.
func New() *Importer {
	return &Importer{objects: map[string]objectIndex{}, uses: map[string]use{}, statics: map[staticKey]place{}, rc: rcVars{vars: map[string]rcVar{}}}
}

// note records words that were not translated.
func (im *Importer) note(at place, text, reason string) {
	im.notes = append(im.notes, Note{File: at.file, Line: at.line, Text: text, Reason: reason})
}

// read records that file is being read, for the order of the notes.
func (im *Importer) read(file string) {
	if !slices.Contains(im.files, file) {
		im.files = append(im.files, file)
	}
}

// bridge and trunk return the bridge or trunk called name, creating it
// with the defaults when it is new. The pointer is valid until the next
// object is created.
func (im *Importer) bridge(name string) *config.Bridge {
	if o, ok := im.objects[name]; ok && o.kind == kindBridge {
		return &im.cfg.Bridges[o.i]
	}
	im.objects[name] = objectIndex{kindBridge, len(im.cfg.Bridges)}
	im.cfg.Bridges = append(im.cfg.Bridges, config.NewBridge(name))
	return &im.cfg.Bridges[len(im.cfg.Bridges)-1]
}

func (im *Importer) trunk(name string) *config.Trunk {
	if o, ok := im.objects[name]; ok && o.kind == kindTrunk {
		return &im.cfg.Trunks[o.i]
	}
	im.objects[name] = objectIndex{kindTrunk, len(im.cfg.Trunks)}
	im.cfg.Trunks = append(im.cfg.Trunks, config.NewTrunk(name))
	return &im.cfg.Trunks[len(im.cfg.Trunks)-1]
}

// declare creates the object name of kind k, or says why it cannot be.
func (im *Importer) declare(k objectKind, name string) string {
	if err := config.CheckName(k.String(), name); err != nil {
		return "not translated: " + err.Error()
	}
	if o, ok := im.objects[name]; ok && o.kind != k {
		return fmt.Sprintf("not translated: %s is already imported as another kind of interface", name)
	}
	if k == kindBridge {
		im.bridge(name)
	} else {
		im.trunk(name)
	}
	return ""
}

// addMember makes iface a port (role "port") or span of the bridge or
// trunk o. It returns why not when it cannot.
func (im *Importer) addMember(o object, role, iface string) string {
	if err := config.CheckName("interface", iface); err != nil {
		return "not translated: " + err.Error()
	}
	if iface == o.name {
		return fmt.Sprintf("not translated: %s cannot be a member of itself", iface)
	}
	if u, ok := im.uses[iface]; ok {
		return fmt.Sprintf("not translated: %s is already a %s of %s %s (%s)", iface, u.role, u.kind, u.owner, u.at)
	}
	im.uses[iface] = use{kind: o.kind, owner: o.name, role: role, at: o.at}
	switch {
	case o.kind == kindTrunk:
		t := im.trunk(o.name)
		t.Ports = append(t.Ports, config.NewTrunkPort(iface))
	case role == "span":
		b := im.bridge(o.name)
		b.Spans = append(b.Spans, iface)
	default:
		b := im.bridge(o.name)
		b.Ports = append(b.Ports, config.NewPort(iface))
	}
	return ""
}

// delMember removes iface, a port or span (role) of o.
func (im *Importer) delMember(o object, role, iface string) string {
	u, ok := im.uses[iface]
	if !ok || u.owner != o.name || u.role != role {
		return fmt.Sprintf("not translated: %s is not a %s of %s here", iface, role, o.name)
	}
	delete(im.uses, iface)
	switch {
	case o.kind == kindTrunk:
		t := im.trunk(o.name)
		t.Ports = slices.DeleteFunc(t.Ports, func(p config.TrunkPort) bool { return p.Name == iface })
	case role == "span":
		b := im.bridge(o.name)
		b.Spans = slices.DeleteFunc(b.Spans, func(s string) bool { return s == iface })
	default:
		b := im.bridge(o.name)
		b.Ports = slices.DeleteFunc(b.Ports, func(p config.Port) bool { return p.Name == iface })
	}
	return ""
}

// port returns the member iface of bridge o, or nil and why not.
func (im *Importer) port(o object, iface string) (*config.Port, string) {
	if p := im.bridge(o.name).Port(iface); p != nil {
		return p, ""
	}
	return nil, fmt.Sprintf("not translated: %s is not a port of %s here", iface, o.name)
}

// addStatic adds (or replaces) a static entry of bridge o.
func (im *Importer) addStatic(o object, iface, mac string, vlan uint16) string {
	m, err := parseMAC(mac)
	if err != nil {
		return "not translated: " + err.Error()
	}
	if m.IsZero() || m.IsMulticast() {
		return fmt.Sprintf("not translated: %s is not a station's address", m)
	}
	if _, why := im.port(o, iface); why != "" {
		return why
	}
	b := im.bridge(o.name)
	s := config.Static{MAC: m, VLAN: vlan, Port: iface}
	key := staticKey{o.name, m, vlan}
	if i := slices.IndexFunc(b.Statics, func(x config.Static) bool { return x.MAC == m && x.VLAN == vlan }); i >= 0 {
		b.Statics[i] = s
	} else {
		b.Statics = append(b.Statics, s)
	}
	im.statics[key] = o.at
	return ""
}

// parseMAC reads a MAC address as ether_aton(3) does (one or two hex
// digits per byte, colon-separated), or in any form frame.ParseMAC takes.
func parseMAC(s string) (frame.MAC, error) {
	parts := strings.Split(s, ":")
	if len(parts) == 6 && !slices.ContainsFunc(parts, func(p string) bool { return len(p) == 0 || len(p) > 2 }) {
		var m frame.MAC
		for i, p := range parts {
			var b byte
			for _, c := range []byte(p) {
				var d byte
				switch {
				case c >= '0' && c <= '9':
					d = c - '0'
				case c >= 'a' && c <= 'f':
					d = c - 'a' + 10
				case c >= 'A' && c <= 'F':
					d = c - 'A' + 10
				default:
					return frame.MAC{}, fmt.Errorf("%q is not a MAC address", s)
				}
				b = b<<4 | d
			}
			m[i] = b
		}
		return m, nil
	}
	m, err := frame.ParseMAC(s)
	if err != nil {
		return frame.MAC{}, fmt.Errorf("%q is not a MAC address", s)
	}
	return m, nil
}

// Result applies the rc.conf files read and returns the configuration,
// valid by the daemon's rules, and the notes in input order. The error
// says why there is nothing to write: no bridge or trunk in the input, or
// a configuration the daemon would refuse; the notes are returned with it.
func (im *Importer) Result() (*config.Config, []Note, error) {
	im.applyRC()
	im.dropForbiddenMembers()
	if len(im.cfg.Bridges) == 0 && len(im.cfg.Trunks) == 0 {
		return nil, im.notes, errors.New("no bridge or trunk to import (want hostname.bridgeN, hostname.vebN, hostname.trunkN or hostname.aggrN files, or an rc.conf with bridges or laggs)")
	}
	if err := im.cfg.Validate(); err != nil {
		return nil, im.notes, fmt.Errorf("the translation is not a valid swctl configuration: %w", err)
	}
	c := im.cfg
	return &c, im.notes, nil
}

// dropForbiddenMembers removes, with a note, what swctl forbids but BSD
// allows or refuses only at run time: a bridge or trunk as a member,
// except a trunk as a bridge's port, and static entries whose port left
// the bridge. Then it puts the notes in input order.
func (im *Importer) dropForbiddenMembers() {
	ifaces := make([]string, 0, len(im.uses))
	for iface := range im.uses {
		ifaces = append(ifaces, iface)
	}
	slices.Sort(ifaces)
	for _, iface := range ifaces {
		u := im.uses[iface]
		obj, ok := im.objects[iface]
		if !ok {
			continue
		}
		k := obj.kind
		if u.kind == kindBridge && u.role == "port" && k == kindTrunk {
			continue // how a trunk joins a bridge
		}
		im.delMember(object{kind: u.kind, name: u.owner, at: u.at}, u.role, iface)
		im.note(u.at, iface, fmt.Sprintf("not translated: %s %s is swctl's own interface, it cannot be a %s of %s %s", k, iface, u.role, u.kind, u.owner))
	}
	for i := range im.cfg.Bridges {
		b := &im.cfg.Bridges[i]
		b.Statics = slices.DeleteFunc(b.Statics, func(s config.Static) bool {
			if b.Port(s.Port) != nil {
				return false
			}
			im.note(im.statics[staticKey{b.Name, s.MAC, s.VLAN}], "static "+s.Port+" "+s.MAC.String(),
				fmt.Sprintf("not translated: %s is no longer a port of %s", s.Port, b.Name))
			return true
		})
	}
	slices.SortStableFunc(im.notes, func(a, b Note) int {
		if fa, fb := slices.Index(im.files, a.File), slices.Index(im.files, b.File); fa != fb {
			return fa - fb
		}
		return a.Line - b.Line
	})
}
