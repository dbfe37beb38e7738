package regress

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs.\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestRenderTableGolden(t *testing.T) {
	cases := []struct {
		file  string
		table Table
	}{
		// The seed's table, figure for figure.
		{"table_seed.golden", seedTable("Throughput (Mb/s)",
			Row{"Receive", []Cell{{Value: 880.50}, {Value: 883.75}, {Value: 884.40}, {Value: 883.50}}},
			Row{"Transmit", []Cell{{Value: 792.25}, {Value: 796.75}, {Value: 847.67}, {Value: 846.50}}},
		)},
		// A bridge: a Forward row, a significant difference, n/a column,
		// and figures wider than the column.
		{"table_bridge.golden", seedTable("CPU (interrupts %)",
			Row{"Receive", []Cell{{Value: 12.5, Marked: true}, {Value: 10.25}, {NA: true}, {NA: true}}},
			Row{"Transmit", []Cell{{Value: 3}, {Value: 3.004}, {NA: true}, {NA: true}}},
			Row{"Forward", []Cell{{Value: 12345678.9}, {Value: 0}, {NA: true}, {NA: true}}},
		)},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			var b strings.Builder
			if err := RenderTable(&b, c.table); err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, b.String())
		})
	}
}

// checkErr fails t unless err matches want: nil when want is "", else
// an error containing want; what names the call.
func checkErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: error %v, want none", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v, want one containing %q", what, err, want)
	}
}
