package regress

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMsgSizePlan(t *testing.T) {
	cfg := DefaultMsgSizeConfig(false, true)
	if !slices.Equal(cfg.Sizes, []int{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536}) {
		t.Errorf("FULL sizes %v, want 1 to 65536 in powers of four", cfg.Sizes)
	}
	var got []string
	for _, in := range MsgSizePlan(4) {
		got = append(got, fmt.Sprintf("%s%d", in.Role, in.Run))
	}
	want := []string{RolePatch + "1", RoleNoPatch + "1", RoleNoPatch + "2", RolePatch + "2", RolePatch + "3", RoleNoPatch + "3", RoleNoPatch + "4", RolePatch + "4"}
	if !slices.Equal(got, want) {
		t.Errorf("plan order:\ngot  %v\nwant %v", got, want)
	}
}

func TestMsgSizeConfig(t *testing.T) {
	cases := []struct {
		name    string
		cfg     MsgSizeConfig
		wantErr string // substring; "" = valid
	}{
		{"default", DefaultMsgSizeConfig(false, false), ""},
		{"quick", DefaultMsgSizeConfig(true, false), ""},
		{"full", DefaultMsgSizeConfig(false, true), ""},
		{"none", MsgSizeConfig{Seconds: 1}, "none given"},
		{"zero", MsgSizeConfig{Sizes: []int{0}, Seconds: 1}, "message size 0"},
		{"too big", MsgSizeConfig{Sizes: []int{1 << 30}, Seconds: 1}, "out of range"},
		{"twice", MsgSizeConfig{Sizes: []int{4, 16, 4}, Seconds: 1}, "message size 4: given twice"},
		{"seconds", MsgSizeConfig{Sizes: []int{4}}, "seconds 0"},
	}
	for _, c := range cases {
		err := c.cfg.check()
		checkErr(t, c.name+": check()", err, c.wantErr)
	}
	q, d, f := DefaultMsgSizeConfig(true, false), DefaultMsgSizeConfig(false, false), DefaultMsgSizeConfig(false, true)
	if q.Seconds >= d.Seconds || d.Seconds >= f.Seconds {
		t.Errorf("seconds QUICK %d, default %d, FULL %d: want increasing", q.Seconds, d.Seconds, f.Seconds)
	}
	if !slices.Equal(q.Sizes, []int{1, 16, 256, 4096, 65536}) || !slices.Equal(f.Sizes, MsgSizes) {
		t.Errorf("sizes QUICK %v, FULL %v: want every other size, and all of them", q.Sizes, f.Sizes)
	}
	if got, err := ParseMsgSizes("1, 64,65536"); err != nil || !slices.Equal(got, []int{1, 64, 65536}) {
		t.Errorf("ParseMsgSizes = %v, %v; want [1 64 65536]", got, err)
	}
	if _, err := ParseMsgSizes("1,x"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("ParseMsgSizes(1,x): err = %v, want one naming \"x\"", err)
	}
}

func TestAnalyzeMsgSizeAndTable(t *testing.T) {
	var samples []MsgSizeSample
	for i := 0; i < 4; i++ {
		f := float64(i)
		for _, x := range []struct {
			role      string
			size      int
			mbps, sys float64
		}{
			// Patch is clearly faster at 1 byte (p = 0.029 with 4 runs).
			{RolePatch, 1, 20 + f, 45}, {RoleNoPatch, 1, 10 + f, 45},
			{RolePatch, 1024, 3000 + f, 40 + f}, {RoleNoPatch, 1024, 3001 - f, 41},
			{RolePatch, 65536, 4100.5, 30}, {RoleNoPatch, 65536, 4099.5, 30},
		} {
			s := MsgSizeSample{Size: x.size}
			s.Role, s.Mbps, s.CPU.System = x.role, x.mbps, x.sys
			samples = append(samples, s)
		}
	}
	cells := AnalyzeMsgSize([]int{1, 1024, 65536}, samples, 0.05)
	for _, c := range cells {
		if c.Metric == "engine" && !c.NA {
			t.Errorf("engine cell %d %s measured without any engine sample", c.Size, c.Role)
		}
	}
	var b strings.Builder
	RenderTable(&b, MsgSizeTable([]int{1, 1024, 65536, 4096}, cells))
	golden(t, "msgsize_table.golden", b.String())
}

func TestWindowTable(t *testing.T) {
	eng := 12.5
	var samples []WindowSample
	for i := 0; i < 3; i++ {
		for _, role := range []string{RolePatch, RoleNoPatch} {
			s := WindowSample{Setup: "bridge0", Role: role, Run: i + 1}
			s.Sent, s.Received, s.Lost = 1000000, 999990, 10
			s.PacketsPerSecond, s.BytesPerSecond, s.CPU.System = 99999, 151398486, 48.25
			if role == RolePatch {
				s.EngineCPU = &eng
			}
			samples = append(samples, s)
		}
	}
	cells := AnalyzeWindow(RateSetups, samples, 0.05)
	for _, c := range cells {
		if c.Setup == "trunk0" {
			t.Fatalf("window cells for trunk0, which has no samples: %+v", c)
		}
	}
	cfg := DefaultRateConfig(false, false)
	var b strings.Builder
	RenderTable(&b, WindowTable(rateSetups(t, "bridge0")[0], cfg, cells))
	golden(t, "window_table.golden", b.String())
}

func TestMsgSizeTablesSeparators(t *testing.T) {
	s := MsgSizeSample{Size: 64}
	s.Role, s.Mbps = RolePatch, 100
	r := &Results{MsgSize: &MsgSizeConfig{Sizes: []int{64}, Seconds: 1}, MsgSizeSamples: []MsgSizeSample{s}}
	analyzeExtra(r, 0.05)
	for _, first := range []bool{true, false} {
		if !first {
			r.Setups = Setups[2:3] // the promisc tables come first
		}
		var b strings.Builder
		printAllTables(&b, r)
		want, got := "== TCP stream by message size: bridge0 Forward ==\n", b.String()
		placed := strings.HasPrefix(got, want)
		if !first {
			placed = strings.Contains(got, "\n\n"+want)
		}
		if !placed || !strings.Contains(got, "\n64        100.00      n/a") {
			t.Errorf("first %v: got\n%q\nwant %q first, or after a blank line when a table comes before it, and the 64-byte row", first, got, want)
		}
	}
	// Nothing ran: nothing printed.
	var b strings.Builder
	printAllTables(&b, &Results{Rate: &RateConfig{}})
	if b.Len() != 0 {
		t.Errorf("no samples: printed %q, want nothing", b.String())
	}
}
