package regress

import (
	"strings"
	"testing"
)

func TestPlanInterleavesABBA(t *testing.T) {
	plan := Plan([]SetupSpec{Setups[0], Setups[2]}, 4)
	var got []string
	for _, in := range plan {
		if in.Setup == "veth" && in.Promisc {
			got = append(got, in.Role)
		}
	}
	want := []string{RolePatch, RoleNoPatch, RoleNoPatch, RolePatch, RolePatch, RoleNoPatch, RoleNoPatch, RolePatch}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("veth PROMISC order:\ngot  %v\nwant %v", got, want)
	}
	// veth and bridge0: 2 columns x 4 runs x 2 roles each (bridge0's
	// -PROMISC is `bridge port --promisc off` on veth).
	if n := len(plan); n != 16+16 {
		t.Errorf("plan has %d instances, want 32", n)
	}
	noPromisc := 0
	for _, in := range plan {
		if in.Setup == "bridge0" && !in.Promisc {
			noPromisc++
		}
	}
	if noPromisc != 8 {
		t.Errorf("plan runs bridge0 -PROMISC %d times, want 8", noPromisc)
	}
}

func TestFindSetups(t *testing.T) {
	s, err := FindSetups([]string{"bridge0", "veth"})
	if err != nil || len(s) != 2 || s[0].Name != "veth" || s[1].Name != "bridge0" {
		t.Errorf("FindSetups(bridge0, veth) = %v, %v; want veth, bridge0 in table order", s, err)
	}
	if _, err := FindSetups([]string{"vlan9"}); err == nil || !strings.Contains(err.Error(), `"vlan9"`) {
		t.Errorf("FindSetups(vlan9): err = %v, want one naming vlan9", err)
	}
}

func TestAnalyzeAndTables(t *testing.T) {
	var samples []Sample
	add := func(row string, promisc bool, role string, mbps ...float64) {
		for i, v := range mbps {
			samples = append(samples, Sample{Setup: "bridge0", Row: row, Promisc: promisc, Role: role, Run: i + 1, Mbps: v,
				CPU: CPUPercent{System: 10, IRQ: 1, SoftIRQ: 2, Interrupts: 3}})
		}
	}
	add(RowReceive, true, RolePatch, 101, 102, 103, 104)
	add(RowReceive, true, RoleNoPatch, 91, 92, 93, 94)
	add(RowTransmit, true, RolePatch, 1, 4, 5, 8)
	add(RowTransmit, true, RoleNoPatch, 2, 3, 6, 7)
	add(RowForward, true, RolePatch, 5)
	add(RowForward, true, RoleNoPatch, 5)
	cells := Analyze([]SetupSpec{Setups[2]}, samples, 0.05)
	var b strings.Builder
	printAllTables(&b, &Results{Setups: []SetupSpec{Setups[2]}, Cells: cells})
	golden(t, "tables_bridge_analyzed.golden", b.String())
	for _, c := range cells {
		if c.Metric == "throughput" && c.Row == RowReceive && c.Promisc && (c.P > 0.0286 || !c.Significant) {
			t.Errorf("Receive PROMISC: p %v significant %v, want 2/70 and significant", c.P, c.Significant)
		}
		if c.Metric == "engine" && !c.NA {
			t.Errorf("engine cell without engine samples should be n/a: %+v", c)
		}
	}
}
