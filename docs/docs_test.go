// Package docs holds swctl's documents; its test keeps their lists of
// packages true to the module.
package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// module is the import path every package of the module starts with.
const module = "github.com/swctl/swctl/"

// packages returns every package of the module, as `go list ./...` prints
// it from the module root, without the module's path.
func packages(t *testing.T) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "list", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(line, module))
	}
	if len(pkgs) == 0 {
		t.Fatal("go list ./... printed no package")
	}
	return pkgs
}

// section returns the lines of the markdown file path from the heading
// line head to the next heading of the same level.
func section(t *testing.T, path, head string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, head)
	if start < 0 {
		t.Fatalf("%s: no heading %q", path, head)
	}
	level := head[:strings.Index(head, " ")+1]
	for i := start + 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], level) {
			return lines[start:i]
		}
	}
	return lines[start:]
}

// tableNames returns the code spans (`...`) in the first cell of every
// table row of lines.
func tableNames(lines []string) []string {
	var names []string
	for _, l := range lines {
		cells := strings.Split(l, "|")
		if len(cells) < 3 || !strings.HasPrefix(l, "| `") {
			continue
		}
		for _, f := range strings.Split(cells[1], ",") {
			names = append(names, strings.Trim(strings.TrimSpace(f), "`"))
		}
	}
	return names
}

// TestArchitectureNamesEveryPackage checks that the package table of
// docs/ARCHITECTURE.md has one row for each package of the module, and
// none for a package that is not there (moved or removed).
func TestArchitectureNamesEveryPackage(t *testing.T) {
	want := packages(t)
	got := tableNames(section(t, "ARCHITECTURE.md", "## The pieces"))
	for _, p := range want {
		n := 0
		for _, g := range got {
			if g == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("docs/ARCHITECTURE.md, The pieces: package %s has %d rows, want 1", p, n)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("docs/ARCHITECTURE.md, The pieces: %s is not a package of the module", p)
		}
	}
}

// TestREADMELayoutNamesEveryPackage checks that the README's layout table
// names each package of the module, and only those.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	want := packages(t)
	got := tableNames(section(t, "../README.md", "## Layout"))
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("README.md, Layout: package %s is not named", p)
		}
	}
	for _, p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("README.md, Layout: %s is not a package of the module", p)
		}
	}
}
