package regress

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The testdata files are real `swctl bench -o json --quiet` outputs,
// recorded on a veth pair in a namespace: a max-rate run (--window 0),
// a search (--search --trial 200ms --max-trials 3) and a paced run
// (--rate 20000), all with --size 60 --flows 4.

func readBenchJSON(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseBenchJSONMax(t *testing.T) {
	b, err := parseBenchJSON(readBenchJSON(t, "swctl_bench_max.json"), "max", 64)
	if err != nil {
		t.Fatal(err)
	}
	r := b.Result
	cases := []struct {
		what      string
		got, want float64
	}{
		{"size", float64(r.Size), 60},
		{"flows", float64(r.Flows), 4},
		{"sent", float64(r.Sent), 152576},
		{"received", float64(r.Received), 138583},
		{"lost", float64(r.Lost), 13993},
		{"rx ring dropped", float64(r.RxRingDropped), 13993},
		{"sent/s", r.SentPerSecond, 508368.61211787094},
		{"packets/s", r.PacketsPerSecond, 461745.276931699},
		{"loss %", r.LossPercent, 9.17116715604027},
		{"latency max ns", float64(r.Latency.Max), 30644039},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("max run: %s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if b.TX != "ra" || b.RX != "rb" || b.Search != nil {
		t.Errorf("max run: tx %q rx %q search %v, want ra, rb, none", b.TX, b.RX, b.Search)
	}
}

func TestParseBenchJSONSearch(t *testing.T) {
	b, err := parseBenchJSON(readBenchJSON(t, "swctl_bench_search.json"), "search", 64)
	if err != nil {
		t.Fatal(err)
	}
	s := b.Search
	if b.Result != nil || s == nil {
		t.Fatalf("search: result %v, search %v; want only a search", b.Result, s)
	}
	if s.Max.Sent != 121792 || s.Max.Rate != 0 {
		t.Errorf("search max run: sent %d rate %v, want 121792 unpaced", s.Max.Sent, s.Max.Rate)
	}
	if s.Rate != 451148.4131804877 || s.TrialRate != 608895.8132478466 || !s.SenderBound || !s.Converged || s.Resolution != 5000 {
		t.Errorf("search: rate %v trial rate %v sender bound %v converged %v resolution %v; want 451148.4131804877, 608895.8132478466, true, true, 5000",
			s.Rate, s.TrialRate, s.SenderBound, s.Converged, s.Resolution)
	}
	if len(s.Trials) == 0 || s.Trials[0].Rate != s.TrialRate || s.Trials[0].Slipped != 30843 || s.Trials[0].Received != 90307 {
		t.Errorf("search trials: %+v; want the first at the trial rate, 30843 slipped, 90307 received", s.Trials)
	}
}

func TestParseBenchJSONRate(t *testing.T) {
	b, err := parseBenchJSON(readBenchJSON(t, "swctl_bench_rate.json"), "rate", 64)
	if err != nil {
		t.Fatal(err)
	}
	if b.Rate != 20000 || b.Sent != 4000 || b.Received != 4000 || b.Latency == nil || b.Latency.Avg != 317509 {
		t.Errorf("paced run: %+v; want rate 20000, 4000 sent and received, latency avg 317509 ns", b.Result)
	}
}

func TestParseBenchJSONErrors(t *testing.T) {
	max := string(readBenchJSON(t, "swctl_bench_max.json"))
	cases := []struct {
		name, text, mode string
		size             int
		wantErr          string
	}{
		{"other mode", max, "search", 64, `mode "max", want "search"`},
		{"other size", max, "max", 1518, "rfc2544_size 64, want 1518"},
		{"interrupted", strings.Replace(max, `"mode": "max",`, `"mode": "max", "interrupted": true,`, 1), "max", 64, "swctl bench ra -> rb: interrupted"},
		{"no search object", `{"mode": "search", "rfc2544_size": 64}`, "search", 64, `without a "search" object`},
		{"no result", `{"mode": "max", "rfc2544_size": 64}`, "max", 64, "no result"},
		{"not JSON", "bench: afpacket ix0: not implemented on openbsd\n", "max", 64, "swctl bench -o json: invalid character"},
		{"empty", "", "max", 64, "swctl bench -o json: EOF"},
	}
	for _, c := range cases {
		_, err := parseBenchJSON([]byte(c.text), c.mode, c.size)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		}
	}
}

func TestParseMAC(t *testing.T) {
	cases := []struct {
		goos, text, want string
	}{
		{"linux", "02:54:00:00:00:01\n", "02:54:00:00:00:01"},
		{"freebsd", "ix0: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500\n\toptions=4e53fbb<RXCSUM,TXCSUM>\n\tether 00:1b:21:aa:bb:cc\n\tinet 10.99.0.1 netmask 0xffffff00 broadcast 10.99.0.255\n", "00:1b:21:aa:bb:cc"},
		{"openbsd", "em1: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n\tlladdr 00:0C:29:12:34:56\n\tindex 2 priority 0 llprio 3\n\tmedia: Ethernet autoselect (1000baseT full-duplex)\n", "00:0c:29:12:34:56"},
	}
	for _, c := range cases {
		got, err := ParseMAC(c.goos, c.text)
		if err != nil || got != c.want {
			t.Errorf("ParseMAC(%s, %q) = %q, %v; want %q", c.goos, c.text, got, err, c.want)
		}
	}
	for _, bad := range []struct{ goos, text string }{
		{"linux", "cat: /sys/class/net/x/address: No such file\n"},
		{"openbsd", "em9: no such interface\n"},
	} {
		if _, err := ParseMAC(bad.goos, bad.text); err == nil || !strings.Contains(err.Error(), "no Ethernet address") {
			t.Errorf("ParseMAC(%s, %q): error %v, want \"no Ethernet address\"", bad.goos, bad.text, err)
		}
	}
}

func TestBenchBinary(t *testing.T) {
	here := runtime.GOOS + "/" + runtime.GOARCH
	cases := []struct {
		name             string
		mode             string // "A/A", "patch" or "base"
		dutOS, dutArch   string // Trees.GOOS, GOARCH
		peerOS, peerArch string
		want             string // binary, or "build" for one more build
	}{
		{"A/A, same system", "A/A", "", "", runtime.GOOS, "", "/t/swctl-nopatch"},
		{"PATCH: the tree is no patch", "patch", "", "", runtime.GOOS, runtime.GOARCH, "/t/swctl-nopatch"},
		{"BASE: the tree is patch", "base", "", "", runtime.GOOS, "", "/t/swctl-patch"},
		{"DUT on another OS", "A/A", "openbsd", "", runtime.GOOS, "", "build"},
		{"peer on another arch", "A/A", "", "", runtime.GOOS, "riscv64", "build"},
	}
	for _, c := range cases {
		tr := &Trees{Mode: c.mode, top: "/src", tmp: t.TempDir(), run: &Commands{}, GOOS: c.dutOS, GOARCH: c.dutArch,
			NoPatch: Tree{Dir: "/src", Binary: "/t/swctl-nopatch"}, Patch: Tree{Dir: "/src", Binary: "/t/swctl-nopatch"}}
		switch c.mode {
		case "patch":
			tr.Patch = Tree{Dir: "/wt", Binary: "/t/swctl-patch"}
		case "base":
			tr.NoPatch, tr.Patch = Tree{Dir: "/wt", Binary: "/t/swctl-nopatch"}, Tree{Dir: "/src", Binary: "/t/swctl-patch"}
		}
		got, err := tr.benchBinary(context.Background(), HostConfig{OS: c.peerOS, Arch: c.peerArch})
		if c.want != "build" {
			if err != nil || got != c.want {
				t.Errorf("%s (harness %s): %q, %v; want %s", c.name, here, got, err, c.want)
			}
			continue
		}
		// /src does not exist: the build fails, after being asked for in
		// the tree as checked out.
		if log := strings.Join(tr.run.Log, "\n"); err == nil || !strings.Contains(err.Error(), "build swctl bench for the peer") || !strings.Contains(log, "(cd /src && go build") {
			t.Errorf("%s: %q, %v, commands %q; want a build in /src", c.name, got, err, log)
		}
	}
}
