package lladdr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeIface is one interface of fakeLinks.
type fakeIface struct {
	// index is the interface index.
	index int
	// mac is the current hardware address.
	mac net.HardwareAddr
}

// fakeLinks is a linkOps over an in-memory table of interfaces.
type fakeLinks struct {
	// mu guards every field below.
	mu sync.Mutex
	// ifaces maps interface names to interfaces.
	ifaces map[string]*fakeIface
	// setErr, when set, is returned by setMAC instead of acting.
	setErr error
	// beforeSet, when set, runs at the start of every setMAC, before it
	// acts or fails: where a test looks at the journal on disk.
	beforeSet func(name string, mac net.HardwareAddr)
	// sets counts setMAC calls that changed an address.
	sets int
}

func newFakeLinks(ifaces map[string]string) *fakeLinks {
	f := &fakeLinks{ifaces: make(map[string]*fakeIface)}
	i := 1
	for name, mac := range ifaces {
		f.ifaces[name] = &fakeIface{index: i, mac: mustMAC(mac)}
		i++
	}
	return f
}

func (f *fakeLinks) link(name string) (int, net.HardwareAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ifi, ok := f.ifaces[name]
	if !ok {
		return 0, nil, ErrNoSuchInterface
	}
	return ifi.index, append(net.HardwareAddr(nil), ifi.mac...), nil
}

func (f *fakeLinks) linkByIndex(index int) (string, net.HardwareAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name, ifi := f.byIndexLocked(index)
	if ifi == nil {
		return "", nil, ErrNoSuchInterface
	}
	return name, append(net.HardwareAddr(nil), ifi.mac...), nil
}

func (f *fakeLinks) byIndexLocked(index int) (string, *fakeIface) {
	for name, ifi := range f.ifaces {
		if ifi.index == index {
			return name, ifi
		}
	}
	return "", nil
}

func (f *fakeLinks) setMAC(index int, mac net.HardwareAddr) error {
	f.mu.Lock()
	name, _ := f.byIndexLocked(index)
	hook := f.beforeSet
	f.mu.Unlock()
	if hook != nil {
		hook(name, mac)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setErr != nil {
		return f.setErr
	}
	_, ifi := f.byIndexLocked(index)
	if ifi == nil {
		return ErrNoSuchInterface
	}
	ifi.mac = append(net.HardwareAddr(nil), mac...)
	f.sets++
	return nil
}

// rename gives the interface old the name new, as `ip link set old name
// new` does: same index, same address.
func (f *fakeLinks) rename(old, new string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ifaces[new] = f.ifaces[old]
	delete(f.ifaces, old)
}

// mac returns the current address of name, "" when absent.
func (f *fakeLinks) mac(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ifi, ok := f.ifaces[name]; ok {
		return ifi.mac.String()
	}
	return ""
}

// put sets an interface's address (or creates it) as someone else would.
func (f *fakeLinks) put(name string, index int, mac string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ifaces[name] = &fakeIface{index: index, mac: mustMAC(mac)}
}

func (f *fakeLinks) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ifaces, name)
}

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openTest(t *testing.T, dir string, f *fakeLinks) *Journal {
	t.Helper()
	j, err := openJournal(dir, f)
	if err != nil {
		t.Fatalf("openJournal(%s): %v", dir, err)
	}
	j.SetLogger(quiet)
	j.now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC) }
	return j
}

// onDisk reads the journal file as a fresh process would.
func onDisk(t *testing.T, dir string) map[string]Entry {
	t.Helper()
	entries, err := readJournal(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatalf("reading the journal back: %v", err)
	}
	m := make(map[string]Entry)
	for _, e := range entries {
		m[e.Interface] = e
	}
	return m
}

const (
	macA = "02:00:00:00:00:0a"
	macB = "02:00:00:00:00:0b"
	macT = "02:00:00:00:00:77" // the trunk's
	macX = "02:00:00:00:00:99" // someone else's
)

func TestSetLLAddrJournalsBeforeTheChange(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA})
	j := openTest(t, dir, f)
	var seen map[string]Entry
	var macAtSet string
	f.beforeSet = func(name string, _ net.HardwareAddr) {
		seen = onDisk(t, dir)
		macAtSet = f.mac(name)
	}
	if err := j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	e, ok := seen["eth1"]
	if !ok {
		t.Fatalf("when the address was changed the journal on disk held %v, want an entry for eth1", seen)
	}
	if e.Original.String() != macA || e.Set.String() != macT || e.Owner != "trunk trunk0" || e.Index != 1 || macAtSet != macA {
		t.Fatalf("journal before the change = %+v (interface at %s), want original %s, set %s, owner trunk trunk0, ifindex 1", e, macAtSet, macA, macT)
	}
	if got := f.mac("eth1"); got != macT {
		t.Fatalf("eth1 has %s after SetLLAddr, want %s", got, macT)
	}
	if p := j.Pending(); len(p) != 1 || p[0].Interface != "eth1" {
		t.Fatalf("Pending = %v, want the eth1 entry", p)
	}
}

// A crash between the journal write and the change: the entry is on disk
// when setMAC runs, and taken back when setMAC fails.
func TestSetLLAddrFailedChangeDropsTheEntry(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA})
	j := openTest(t, dir, f)
	boom := errors.New("device or resource busy")
	f.setErr = boom
	var journalled bool
	f.beforeSet = func(string, net.HardwareAddr) { _, journalled = onDisk(t, dir)["eth1"] }
	err := j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0")
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "lladdr eth1: set "+macT) {
		t.Fatalf("SetLLAddr with a failing change = %v, want the cause named with the interface", err)
	}
	if !journalled {
		t.Fatal("the journal on disk had no entry when the change was attempted")
	}
	if d := onDisk(t, dir); len(d) != 0 {
		t.Fatalf("journal on disk after the failed change = %v, want empty", d)
	}
	if p := j.Pending(); len(p) != 0 {
		t.Fatalf("Pending after the failed change = %v, want none", p)
	}
	if got := f.mac("eth1"); got != macA {
		t.Fatalf("eth1 = %s, want %s unchanged", got, macA)
	}
}

// A failed second change keeps the first one's entry: the interface still
// carries the first address.
func TestSetLLAddrFailedSecondChangeKeepsTheFirst(t *testing.T) {
	dir, f, j := trunkMACOnEth1(t)
	f.setErr = errors.New("busy")
	if err := j.SetLLAddr("eth1", mustMAC(macB), "trunk trunk1"); err == nil {
		t.Fatal("SetLLAddr with a failing change: no error")
	}
	e := onDisk(t, dir)["eth1"]
	if e.Original.String() != macA || e.Set.String() != macT || e.Owner != "trunk trunk0" {
		t.Fatalf("entry after a failed second change = %+v, want the first change (%s -> %s by trunk trunk0)", e, macA, macT)
	}
}

func TestSetLLAddrKeepsTheFirstOriginal(t *testing.T) {
	dir, f, j := trunkMACOnEth1(t)
	if err := j.SetLLAddr("eth1", mustMAC(macB), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	e := onDisk(t, dir)["eth1"]
	if e.Original.String() != macA || e.Set.String() != macB {
		t.Fatalf("after two changes the entry is %s -> %s, want %s -> %s (the first original kept)", e.Original, e.Set, macA, macB)
	}
	if err := j.RestoreLLAddr("eth1"); err != nil {
		t.Fatal(err)
	}
	if got := f.mac("eth1"); got != macA {
		t.Fatalf("eth1 restored to %s, want the first original %s", got, macA)
	}
}

func TestSetLLAddrNoChange(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA})
	j := openTest(t, dir, f)
	// The trunk's first port already has the trunk's address.
	if err := j.SetLLAddr("eth1", mustMAC(macA), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	if f.sets != 0 || len(j.Pending()) != 0 {
		t.Fatalf("setting the address an interface has: %d changes, pending %v; want none", f.sets, j.Pending())
	}
	if err := j.RestoreLLAddr("eth1"); err != nil || f.sets != 0 {
		t.Fatalf("RestoreLLAddr with nothing journalled = %v after %d changes, want nil and none", err, f.sets)
	}
	// Back to the original by SetLLAddr: entry dropped.
	if err := j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	if err := j.SetLLAddr("eth1", mustMAC(macA), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	if got, d := f.mac("eth1"), onDisk(t, dir); got != macA || len(d) != 0 {
		t.Fatalf("set back to the original: eth1 = %s, journal %v; want %s and empty", got, d, macA)
	}
}

func TestSetLLAddrErrors(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA})
	j := openTest(t, dir, f)
	err := j.SetLLAddr("eth9", mustMAC(macT), "trunk trunk0")
	if !errors.Is(err, ErrNoSuchInterface) || err.Error() != "lladdr eth9: set "+macT+": no such interface" {
		t.Fatalf("SetLLAddr on a missing interface = %v", err)
	}
	if err := j.SetLLAddr("eth1", nil, "x"); err == nil {
		t.Fatal("SetLLAddr with no address: no error")
	}
	// A journal that cannot be written: the address is not changed.
	os.Remove(filepath.Join(dir, JournalFile))
	if err := os.Mkdir(filepath.Join(dir, JournalFile), 0o700); err != nil {
		t.Fatal(err)
	}
	err = j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0")
	if err == nil || !strings.Contains(err.Error(), "not changed") {
		t.Fatalf("SetLLAddr with an unwritable journal = %v, want an error saying nothing changed", err)
	}
	if f.sets != 0 || f.mac("eth1") != macA || len(j.Pending()) != 0 {
		t.Fatalf("unwritable journal: %d changes, eth1 = %s, pending %v; want nothing done", f.sets, f.mac("eth1"), j.Pending())
	}
	assertNoTemp(t, dir)
}

func TestRestoreLLAddr(t *testing.T) {
	boom := errors.New("operation not permitted")
	cases := []struct {
		name string
		// meddle changes eth1 behind swctl's back after SetLLAddr.
		meddle    func(f *fakeLinks)
		setErr    error
		wantErr   error
		wantMAC   string
		wantEntry bool
	}{
		{name: "unchanged since: put back", wantMAC: macA},
		{name: "changed by someone: left alone", meddle: func(f *fakeLinks) { f.put("eth1", 1, macX) }, wantMAC: macX},
		{name: "another device of that name: left alone", meddle: func(f *fakeLinks) { f.put("eth1", 7, macT) }, wantMAC: macT},
		{name: "absent: entry kept", meddle: func(f *fakeLinks) { f.remove("eth1") }, wantErr: ErrNoSuchInterface, wantEntry: true},
		{name: "change fails: entry kept", setErr: boom, wantErr: boom, wantMAC: macT, wantEntry: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, f, j := trunkMACOnEth1(t)
			if c.meddle != nil {
				c.meddle(f)
			}
			f.setErr = c.setErr
			err := j.RestoreLLAddr("eth1")
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("RestoreLLAddr = %v, want %v", err, c.wantErr)
			}
			if c.wantErr != nil && !strings.HasPrefix(err.Error(), "lladdr eth1: restore "+macA+": ") {
				t.Errorf("RestoreLLAddr error %q does not name the interface and the address", err)
			}
			if got := f.mac("eth1"); got != c.wantMAC {
				t.Errorf("eth1 = %q after RestoreLLAddr, want %q", got, c.wantMAC)
			}
			_, onFile := onDisk(t, dir)["eth1"]
			_, pending := func() (Entry, bool) {
				for _, e := range j.Pending() {
					if e.Interface == "eth1" {
						return e, true
					}
				}
				return Entry{}, false
			}()
			if onFile != c.wantEntry || pending != c.wantEntry {
				t.Errorf("entry on disk %v, pending %v; want %v", onFile, pending, c.wantEntry)
			}
		})
	}
}

// A crash after the change: a new Journal over the same directory (the
// next start) finds the entry and RecoverAll puts every address back,
// reporting each entry by what happened to it.
func TestRecoverAllAfterCrash(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA, "eth2": macB, "eth3": "02:00:00:00:00:03", "eth4": "02:00:00:00:00:04"})
	j := openTest(t, dir, f)
	for _, n := range []string{"eth1", "eth2", "eth3", "eth4"} {
		if err := j.SetLLAddr(n, mustMAC(macT), "trunk trunk0"); err != nil {
			t.Fatal(err)
		}
	}
	// The crash: j is abandoned. Meanwhile eth2 is changed by someone,
	// eth3 goes away, and eth4 cannot be changed.
	eth3Index := f.ifaces["eth3"].index
	f.put("eth2", f.ifaces["eth2"].index, macX)
	f.remove("eth3")
	boom := errors.New("operation not supported")
	f.beforeSet = func(name string, _ net.HardwareAddr) {
		if name == "eth4" {
			f.mu.Lock()
			f.setErr = boom
			f.mu.Unlock()
		}
	}

	j2 := openTest(t, dir, f)
	if n := len(j2.Pending()); n != 4 {
		t.Fatalf("after the crash the journal lists %d entries, want 4", n)
	}
	var logged bytes.Buffer
	rep, err := j2.RecoverAll(slog.New(slog.NewTextHandler(&logged, nil)))
	if !errors.Is(err, boom) {
		t.Fatalf("RecoverAll error = %v, want the eth4 failure", err)
	}
	names := func(list []Outcome) string {
		var s []string
		for _, o := range list {
			s = append(s, o.Entry.Interface)
		}
		return strings.Join(s, ",")
	}
	got := fmt.Sprintf("restored=%s skipped=%s absent=%s failed=%s", names(rep.Restored), names(rep.Skipped), names(rep.Absent), names(rep.Failed))
	if want := "restored=eth1 skipped=eth2 absent=eth3 failed=eth4"; got != want {
		t.Fatalf("report %s, want %s", got, want)
	}
	if f.mac("eth1") != macA || f.mac("eth2") != macX {
		t.Fatalf("eth1 = %s, eth2 = %s; want %s (restored) and %s (left alone)", f.mac("eth1"), f.mac("eth2"), macA, macX)
	}
	d := onDisk(t, dir)
	if _, ok := d["eth3"]; !ok || len(d) != 2 {
		t.Fatalf("journal after recovery = %v, want eth3 (absent) and eth4 (failed) kept", d)
	}
	if _, ok := d["eth4"]; !ok {
		t.Fatalf("journal after recovery = %v, want eth4 kept", d)
	}
	for _, n := range []string{"eth1", "eth2", "eth3", "eth4"} {
		if !strings.Contains(logged.String(), "interface="+n) {
			t.Errorf("no log line for %s in:\n%s", n, logged.String())
		}
	}

	s := rep.String()
	for _, want := range []string{
		"restored 1:\n  eth1 " + macT + " -> " + macA + " (set by trunk trunk0)\n",
		"skipped 1:\n  eth2 left at " + macX + ": address changed by someone else",
		"absent 1:\n  eth3 (original 02:00:00:00:00:03, set " + macT + " by trunk trunk0): kept in the journal\n",
		"failed 1:\n  eth4 ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Report.String() lacks %q:\n%s", want, s)
		}
	}

	// The absent interface comes back with the address swctl set: the
	// next recovery restores it.
	f.put("eth3", eth3Index, macT)
	f.setErr, f.beforeSet = nil, nil
	rep, err = openTest(t, dir, f).RecoverAll(quiet)
	if err != nil || names(rep.Restored) != "eth3,eth4" {
		t.Fatalf("second recovery: restored %s, err %v; want eth3,eth4 and nil", names(rep.Restored), err)
	}
	if d := onDisk(t, dir); len(d) != 0 {
		t.Fatalf("journal after the second recovery = %v, want empty", d)
	}
	rep, err = openTest(t, dir, f).RecoverAll(quiet)
	if err != nil || !rep.Empty() || rep.String() != "nothing to recover\n" {
		t.Fatalf("recovery with nothing journalled = %+v, %v; want empty, nil", rep, err)
	}
}

func TestReportJSON(t *testing.T) {
	dir, f, _ := trunkMACOnEth1(t)
	rep, err := openTest(t, dir, f).RecoverAll(quiet)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"restored":[{"entry":{"interface":"eth1","ifindex":1,"original":"` + macA + `","set":"` + macT +
		`","owner":"trunk trunk0","time":"2025-01-02T03:04:05.000000006Z"},"result":"restored","current":"` + macA +
		`"}],"skipped":[],"absent":[],"failed":[]}`
	if string(b) != want {
		t.Fatalf("Report JSON:\n got %s\nwant %s", b, want)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Restored[0].Entry.String() != rep.Restored[0].Entry.String() || back.Restored[0].Current.String() != macA {
		t.Fatalf("Report JSON round trip: %+v, want %+v", back, rep)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != JournalFile {
			t.Errorf("stray file %s in the state directory", de.Name())
		}
	}
}

func TestJournalFileIsAtomicAndPrivate(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA, "eth2": macB})
	j := openTest(t, dir, f)
	for i := 0; i < 10; i++ {
		if err := j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0"); err != nil {
			t.Fatal(err)
		}
		if err := j.SetLLAddr("eth2", mustMAC(macT), "trunk trunk0"); err != nil {
			t.Fatal(err)
		}
		if err := j.RestoreLLAddr("eth1"); err != nil {
			t.Fatal(err)
		}
	}
	assertNoTemp(t, dir)
	fi, err := os.Stat(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(filepath.Join(dir, JournalFile))
	if !bytes.Contains(b, []byte(`"original": "`+macB+`"`)) || !bytes.HasPrefix(b, []byte("{\n  \"version\": 1,")) {
		t.Fatalf("journal file is not the documented format:\n%s", b)
	}

	// A failed write (the rename target is a directory) leaves no
	// temporary file behind.
	target := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(target, JournalFile, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeJournal(filepath.Join(target, JournalFile), nil); err == nil {
		t.Fatal("writeJournal over a non-empty directory: no error")
	}
	des, _ := os.ReadDir(target)
	if len(des) != 1 {
		t.Fatalf("after a failed write %s holds %d entries, want only the obstacle", target, len(des))
	}
}

func TestCorruptJournal(t *testing.T) {
	good := `{"interface":"eth1","ifindex":2,"original":"` + macA + `","set":"` + macT + `","owner":"trunk trunk0","time":"2025-01-02T03:04:05Z"}`
	cases := []struct {
		name, file, cause string
	}{
		{"empty file", "", "empty file"},
		{"not JSON", "\x00\x01garbage", "decode: invalid character"},
		{"truncated", `{"version":1,"entries":[` + good[:40], "decode: unexpected EOF"},
		{"unknown version", `{"version":2,"entries":[]}`, "unsupported version 2"},
		{"bad address", `{"version":1,"entries":[` + strings.Replace(good, macA, "02:zz", 1) + `]}`, "original: address 02:zz: invalid MAC address"},
		{"missing address", `{"version":1,"entries":[` + strings.Replace(good, `"set":"`+macT+`",`, "", 1) + `]}`, "set: missing hardware address"},
		{"no name", `{"version":1,"entries":[` + strings.Replace(good, `"eth1"`, `""`, 1) + `]}`, "entry 0: no interface name"},
		{"index listed twice", `{"version":1,"entries":[` + good + `,` + strings.Replace(good, `"eth1"`, `"eth9"`, 1) + `]}`, "entry 1 (eth9): ifindex 2 listed twice"},
		{"bad ifindex", `{"version":1,"entries":[` + strings.Replace(good, `"ifindex":2`, `"ifindex":0`, 1) + `]}`, "entry 0 (eth1): bad ifindex 0"},
		{"unknown field", `{"version":1,"entries":[],"extra":true}`, `unknown field "extra"`},
		{"trailing data", `{"version":1,"entries":[]} {}`, "data after the journal object"},
		{"wrong type", `{"version":"1","entries":[]}`, "decode: json: cannot unmarshal string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, JournalFile)
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := openJournal(dir, newFakeLinks(nil))
			if err == nil {
				t.Fatal("openJournal on a corrupt journal: no error")
			}
			if want := "lladdr journal " + path + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), c.cause) {
				t.Fatalf("error %q, want it to start with %q and name the cause %q", err, want, c.cause)
			}
			if b, _ := os.ReadFile(path); string(b) != c.file {
				t.Fatal("the corrupt journal was rewritten")
			}
		})
	}
	// The good entry alone decodes.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, JournalFile), []byte(`{"version":1,"entries":[`+good+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := openJournal(dir, newFakeLinks(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := j.Pending(); len(p) != 1 || p[0].String() != "eth1 "+macA+" -> "+macT+" (trunk trunk0)" || p[0].Index != 2 {
		t.Fatalf("Pending = %v", p)
	}
}

func TestForget(t *testing.T) {
	dir, f, j := trunkMACOnEth1(t)
	if err := j.Forget("eth1"); err != nil {
		t.Fatal(err)
	}
	if d := onDisk(t, dir); len(d) != 0 || f.mac("eth1") != macT {
		t.Fatalf("Forget: journal %v, eth1 %s; want empty and untouched", d, f.mac("eth1"))
	}
}

func TestJournalConcurrent(t *testing.T) {
	dir := t.TempDir()
	names := []string{"eth1", "eth2", "eth3", "eth4"}
	ifaces := make(map[string]string)
	for i, n := range names {
		ifaces[n] = fmt.Sprintf("02:00:00:00:01:%02x", i)
	}
	f := newFakeLinks(ifaces)
	j := openTest(t, dir, f)
	var wg sync.WaitGroup
	for g, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if err := j.SetLLAddr(n, mustMAC(fmt.Sprintf("02:00:00:00:02:%02x", i)), fmt.Sprintf("trunk trunk%d", g)); err != nil {
					t.Error(err)
					return
				}
				_ = j.Pending()
				if i%3 == 0 {
					if err := j.RestoreLLAddr(n); err != nil {
						t.Error(err)
						return
					}
				}
			}
			if err := j.RestoreLLAddr(n); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, n := range names {
		if f.mac(n) != ifaces[n] {
			t.Errorf("%s = %s after balanced changes, want %s", n, f.mac(n), ifaces[n])
		}
	}
	if d := onDisk(t, dir); len(d) != 0 {
		t.Errorf("journal after balanced changes = %v, want empty", d)
	}
	assertNoTemp(t, dir)
}

// The journal follows the device, which is its index, not its name: a
// member renamed while swctl holds it gets its address back whichever
// name the restore is asked for, and a device that took the old name is
// left alone.
func TestRestoreFollowsRenames(t *testing.T) {
	cases := []struct {
		name string
		// after changes the interfaces once eth1 (index 1) carries macT.
		after func(f *fakeLinks)
		// restore is the name RestoreLLAddr is called with.
		restore string
		// want is every interface's address afterwards.
		want map[string]string
	}{
		{name: "renamed, restored by its old name", after: func(f *fakeLinks) { f.rename("eth1", "up1") },
			restore: "eth1", want: map[string]string{"up1": macA}},
		{name: "renamed, restored by its new name", after: func(f *fakeLinks) { f.rename("eth1", "up1") },
			restore: "up1", want: map[string]string{"up1": macA}},
		{name: "renamed, another device took the old name", after: func(f *fakeLinks) {
			f.rename("eth1", "up1")
			f.put("eth1", 7, macT)
		}, restore: "eth1", want: map[string]string{"up1": macA, "eth1": macT}},
		{name: "gone, another device has its name", after: func(f *fakeLinks) {
			f.remove("eth1")
			f.put("eth1", 7, macT)
		}, restore: "eth1", want: map[string]string{"eth1": macT}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, f, j := trunkMACOnEth1(t)
			c.after(f)
			if err := j.RestoreLLAddr(c.restore); err != nil {
				t.Fatalf("RestoreLLAddr(%s) = %v, want nil", c.restore, err)
			}
			for name, want := range c.want {
				if got := f.mac(name); got != want {
					t.Errorf("%s = %s after RestoreLLAddr(%s), want %s", name, got, c.restore, want)
				}
			}
			if p := j.Pending(); len(p) != 0 {
				t.Errorf("pending after the restore: %v, want none", p)
			}
			if d := onDisk(t, dir); len(d) != 0 {
				t.Errorf("journal file after the restore: %v, want empty", d)
			}
		})
	}
}

// A crash while a member carries the trunk's MAC, then the member is
// renamed: the next start (or `swctl recover`) restores it under its new
// name and says so, instead of keeping the entry as absent.
func TestRecoverAllRenamedAfterCrash(t *testing.T) {
	dir := t.TempDir()
	f := newFakeLinks(map[string]string{"eth1": macA})
	if err := openTest(t, dir, f).SetLLAddr("eth1", mustMAC(macT), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	f.rename("eth1", "up1")
	rep, err := openTest(t, dir, f).RecoverAll(quiet)
	if err != nil {
		t.Fatalf("RecoverAll = %v, want nil", err)
	}
	if len(rep.Restored) != 1 || rep.Restored[0].Name != "up1" || f.mac("up1") != macA {
		t.Fatalf("recovery of a renamed member: %+v, up1 = %s; want it restored to %s under its new name", rep, f.mac("up1"), macA)
	}
	if want := "  eth1 (now up1) " + macT + " -> " + macA + " (set by trunk trunk0)\n"; !strings.Contains(rep.String(), want) {
		t.Errorf("report %q lacks %q", rep.String(), want)
	}
	if d := onDisk(t, dir); len(d) != 0 {
		t.Errorf("journal after recovery = %v, want empty", d)
	}
}

// A second change of a renamed member keeps the first original and
// journals the new name: one entry per device.
func TestSetLLAddrAfterRename(t *testing.T) {
	_, f, j := trunkMACOnEth1(t)
	f.rename("eth1", "up1")
	if err := j.SetLLAddr("up1", mustMAC(macX), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	p := j.Pending()
	if len(p) != 1 || p[0].Interface != "up1" || p[0].Original.String() != macA || p[0].Set.String() != macX {
		t.Fatalf("pending after a second change under a new name: %v, want one entry up1 %s -> %s", p, macA, macX)
	}
}

// trunkMACOnEth1 opens a journal in a new directory over one interface,
// eth1 (macA), and gives eth1 the trunk's MAC through it.
func trunkMACOnEth1(t *testing.T) (dir string, f *fakeLinks, j *Journal) {
	t.Helper()
	dir = t.TempDir()
	f = newFakeLinks(map[string]string{"eth1": macA})
	j = openTest(t, dir, f)
	if err := j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	return dir, f, j
}

// A device deleted and another made under its name: the new one's change
// drops the old entry, whose original belongs to a device that is gone.
func TestSetLLAddrReplacedDevice(t *testing.T) {
	dir, f, j := trunkMACOnEth1(t)
	f.remove("eth1")
	f.put("eth1", 7, macB)
	if err := j.SetLLAddr("eth1", mustMAC(macT), "trunk trunk0"); err != nil {
		t.Fatal(err)
	}
	p := j.Pending()
	if len(p) != 1 || p[0].Index != 7 || p[0].Original.String() != macB {
		t.Fatalf("pending after the new eth1 was changed: %v, want one entry, index 7, original %s", p, macB)
	}
	if d := onDisk(t, dir); len(d) != 1 || d["eth1"].Index != 7 {
		t.Fatalf("journal file: %v, want the new eth1's entry only", d)
	}
	if err := j.RestoreLLAddr("eth1"); err != nil || f.mac("eth1") != macB {
		t.Fatalf("RestoreLLAddr = %v, eth1 = %s; want nil, %s", err, f.mac("eth1"), macB)
	}
}
