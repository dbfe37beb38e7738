package bsdbuild

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawCalls are the functions of syscall and x/sys/unix that make a
// system call by number.
var rawCalls = map[string]bool{
	"Syscall": true, "Syscall6": true, "Syscall9": true,
	"RawSyscall": true, "RawSyscall6": true,
	"SyscallNoError": true, "RawSyscallNoError": true,
}

// syscallPackages are the import paths whose Syscall functions and SYS_
// numbers the rule is about.
var syscallPackages = map[string]bool{"syscall": true, "golang.org/x/sys/unix": true}

// violations lists, as "file:line: what", every system call by number in
// f other than Syscall(SYS_IOCTL, ...) (the only one Go routes to libc on
// OpenBSD: RawSyscall never is, nor Syscall6 with SYS_IOCTL), and every
// SYS_ number other than SYS_IOCTL.
func violations(fset *token.FileSet, f *ast.File) []string {
	names := map[string]bool{} // local names of syscallPackages
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !syscallPackages[path] {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	isSys := func(e ast.Expr) (string, bool) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || !names[id.Name] {
			return "", false
		}
		return sel.Sel.Name, true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			fn, ok := isSys(n.Fun)
			if !ok || !rawCalls[fn] {
				return true
			}
			if fn == "Syscall" && len(n.Args) > 0 {
				if num, ok := isSys(n.Args[0]); ok && num == "SYS_IOCTL" {
					return true
				}
			}
			out = append(out, fset.Position(n.Pos()).String()+": "+fn+" other than Syscall(SYS_IOCTL, ...)")
		case *ast.SelectorExpr:
			if name, ok := isSys(n); ok && strings.HasPrefix(name, "SYS_") && name != "SYS_IOCTL" {
				out = append(out, fset.Position(n.Pos()).String()+": "+name)
			}
		}
		return true
	})
	return out
}

func TestViolationsSpec(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      int
	}{
		{"ioctl through Syscall", `package p; import "golang.org/x/sys/unix"; func f() { unix.Syscall(unix.SYS_IOCTL, 0, 0, 0) }`, 0},
		{"ioctl through syscall.Syscall", `package p; import "syscall"; func f() { syscall.Syscall(syscall.SYS_IOCTL, 0, 0, 0) }`, 0},
		{"read through Syscall", `package p; import "golang.org/x/sys/unix"; func f() { unix.Syscall(unix.SYS_READ, 0, 0, 0) }`, 2},
		{"RawSyscall of ioctl", `package p; import "golang.org/x/sys/unix"; func f() { unix.RawSyscall(unix.SYS_IOCTL, 0, 0, 0) }`, 1},
		{"Syscall6 of ioctl", `package p; import "golang.org/x/sys/unix"; func f() { unix.Syscall6(unix.SYS_IOCTL, 0, 0, 0, 0, 0, 0) }`, 1},
		{"number in a variable", `package p; import "golang.org/x/sys/unix"; var n uintptr = 4; func f() { unix.Syscall6(n, 0, 0, 0, 0, 0, 0) }`, 1},
		{"renamed import", `package p; import u "golang.org/x/sys/unix"; func f() { u.RawSyscall(u.SYS_SOCKET, 0, 0, 0) }`, 2},
		{"a SYS_ number named anywhere", `package p; import "syscall"; const n = syscall.SYS_MMAP`, 1},
		{"libc wrappers are fine", `package p; import "golang.org/x/sys/unix"; func f() { unix.Read(0, nil); unix.Socket(0, 0, 0) }`, 0},
		{"another package's Syscall", `package p; import "example.com/unix"; func f() { unix.Syscall(unix.SYS_READ) }`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := violations(fset, f); len(got) != c.want {
				t.Errorf("%d violations, want %d: %q", len(got), c.want, got)
			}
		})
	}
}

// bsdTargets are the systems the rule applies to, with the architectures
// that are built.
var bsdTargets = []struct{ goos, goarch string }{
	{"openbsd", "amd64"}, {"openbsd", "arm64"}, {"freebsd", "amd64"}, {"freebsd", "arm64"},
}

// TestOnlyIoctlIsRaw scans every Go file of the module that builds for a
// BSD target.
func TestOnlyIoctlIsRaw(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	ctxs := make([]build.Context, len(bsdTargets))
	for i, tg := range bsdTargets {
		ctxs[i] = build.Default
		ctxs[i].GOOS, ctxs[i].GOARCH, ctxs[i].CgoEnabled = tg.goos, tg.goarch, false
	}
	scanned := 0
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir, name := filepath.Split(path)
		bsd := false
		for i := range ctxs {
			ok, err := ctxs[i].MatchFile(dir, name)
			if err != nil {
				return err
			}
			bsd = bsd || ok
		}
		if !bsd {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		for _, v := range violations(fset, f) {
			t.Errorf("%s: on the BSDs the only system call by number is Syscall(SYS_IOCTL, ...) (OpenBSD >= 7.5 allows system calls through libc only)", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The BSD backends alone are dozens of files: a handful means the
	// walk or the build matching went wrong.
	if scanned < 50 {
		t.Errorf("scanned %d files that build for the BSDs; want the whole module's", scanned)
	}
	t.Logf("scanned %d files", scanned)
}
