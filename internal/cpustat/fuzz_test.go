package cpustat

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary text to the /proc/stat and /proc/PID/stat
// parsers: they return an error for what they cannot read, never panic.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("cpu  100 0 50 1000 0 0 0 0 0 0\ncpu0 50 0 25 500 0 0 0 0 0 0\n"))
	f.Add([]byte("1234 (swctl daemon) S 1 1234 1234 0 -1 4194560 1 0 0 0 17 5 0 0 20 0 9 0 100 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := string(b)
		ParseStat(s)
		ParsePidStat(s)
	})
}
