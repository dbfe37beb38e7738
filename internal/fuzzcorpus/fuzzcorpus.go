// Package fuzzcorpus keeps the seed corpus of a fuzz target as files under
// testdata, as the test code defines it, so that `go test` replays the
// seeds even when the target is not fuzzed, and a stale file shows.
package fuzzcorpus

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Check checks that dir (testdata/fuzz/<target>) holds one file per seed,
// named by its key, in the format `go test` reads. With the environment
// variable env set to 1 it writes the files instead, which is how a
// package refreshes its corpus after changing its seeds.
func Check(t testing.TB, dir string, seeds map[string][]byte, env string) {
	t.Helper()
	write := os.Getenv(env) == "1"
	if write {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range seeds {
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		path := filepath.Join(dir, name)
		if write {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("seed %s: missing or stale (err %v); run %s=1 go test -run %s in its package", path, err, env, t.Name())
		}
	}
}

// Add gives f every seed, in the order of their names (map order would
// change the order the seeds run in from one run to the next).
func Add(f *testing.F, seeds map[string][]byte) {
	for _, name := range slices.Sorted(maps.Keys(seeds)) {
		f.Add(seeds[name])
	}
}
