package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"

	"github.com/swctl/swctl/internal/api"
	"github.com/swctl/swctl/internal/api/apitest"
)

// captureFake is a daemon whose captures send three frames.
func captureFake() *apitest.Fake {
	return &apitest.Fake{
		Frames: []api.CapturedFrame{
			{Port: "eth1", Dir: api.FrameIn, Time: time.Unix(1700000000, 1), Len: 60, Data: bytes.Repeat([]byte{1}, 60)},
			{Port: "eth2", Dir: api.FrameOut, Time: time.Unix(1700000000, 2), Len: 1514, Data: bytes.Repeat([]byte{2}, 96)},
			{Port: "eth1", Dir: api.FrameIn, Time: time.Unix(1700000000, 3), Len: 60, Data: bytes.Repeat([]byte{3}, 60)},
		},
		CaptureDropped: 5,
		Errs:           map[string]error{},
	}
}

// pcapngFrames reads back a pcapng stream as "interface/description
// length first-byte" lines.
func pcapngFrames(t *testing.T, b []byte) []string {
	t.Helper()
	r, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatalf("output is not pcapng: %v", err)
	}
	var out []string
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		intf, _ := r.Interface(ci.InterfaceIndex)
		out = append(out, intf.Name+"/"+intf.Description+" "+strconv.Itoa(ci.Length)+" "+strconv.Itoa(int(data[0])))
	}
}

func TestCLICapture(t *testing.T) {
	fake := captureFake()
	socket := apitest.Serve(t, fake)
	swctl := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"swctl", "--socket", socket}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}

	out, stderr, code := swctl("capture", "bridge0", "-c", "2")
	if code != 0 || stderr != "capture bridge0: 2 frames, 5 dropped (the capture's queue was full)\n" {
		t.Fatalf("capture -c 2: exit %d, stderr %q", code, stderr)
	}
	want := []string{
		"eth1/frames received by eth1 (swctl capture bridge0) " + strconv.Itoa(60) + " " + strconv.Itoa(1),
		"eth2/frames sent by eth2 (swctl capture bridge0) " + strconv.Itoa(1514) + " " + strconv.Itoa(2),
	}
	if got := pcapngFrames(t, []byte(out)); !reflect.DeepEqual(got, want) {
		t.Errorf("capture -c 2: frames\nexpected %q\ngot      %q", want, got)
	}

	file := filepath.Join(t.TempDir(), "out.pcap")
	if _, stderr, code := swctl("capture", "eth1", "--pcap", "-w", file, "--direction", "in", "-s", "64"); code != 0 {
		t.Fatalf("capture --pcap -w: exit %d, stderr %q", code, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("-w file is not pcap: %v", err)
	}
	n := 0
	for _, _, err := r.ReadPacketData(); err == nil; _, _, err = r.ReadPacketData() {
		n++
	}
	if n != 3 {
		t.Errorf("capture --pcap: expected the 3 frames the daemon sent, got %d", n)
	}

	wantCalls := []apitest.Call{
		{Op: "capture", Req: api.CaptureRequest{StreamVersion: api.StreamVersion, Name: "bridge0", Count: 2}},
		{Op: "capture", Req: api.CaptureRequest{StreamVersion: api.StreamVersion, Name: "eth1", Direction: "in", Snaplen: 64}},
	}
	if got := fake.Recorded(); !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("requests\nexpected %+v\ngot      %+v", wantCalls, got)
	}

	fake.Errs[api.OpCapture] = errors.New("capture eth9: not a bridge or a port of one")
	if _, stderr, code := swctl("capture", "eth9"); code != 1 || stderr != "swctl: capture eth9: not a bridge or a port of one\n" {
		t.Errorf("refused capture: expected exit 1 and the daemon's reason, got %d %q", code, stderr)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"capture", "bridge0", "-c", "0"}, "swctl: -c: want a number of frames, 1 or more; got 0\n"},
		{[]string{"capture", "bridge0", "--direction", "up"}, "swctl: capture bridge0: direction \"up\": want in, out or both\n"},
		{[]string{"capture", "bridge0", "-s", "10"}, "swctl: capture bridge0: snap length 10: want 14 to 262144\n"},
		{[]string{"capture"}, "swctl: capture: missing arguments (usage: swctl capture NAME)\n"},
	} {
		if _, stderr, code := swctl(tt.args...); code != 2 || stderr != tt.want {
			t.Errorf("%q: expected exit 2 and %q, got %d %q", tt.args, tt.want, code, stderr)
		}
	}
}
