package supervise

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// panicker panics with v; its name must show in a recovered stack.
func panicker(v any) { panic(v) }

// TestHandlerGetsThePanic: a panic in a supervised goroutine reaches the
// installed handler with the goroutine's name, the value and a stack that
// shows where it panicked; the goroutine then ends normally.
func TestHandlerGetsThePanic(t *testing.T) {
	tests := []struct {
		name  string
		start func(name string, f func(), wg *sync.WaitGroup)
	}{
		{"Go", func(name string, f func(), wg *sync.WaitGroup) {
			Go(name, func() { defer wg.Done(); f() })
		}},
		{"Run in a WaitGroup goroutine", func(name string, f func(), wg *sync.WaitGroup) {
			go func() { defer wg.Done(); Run(name, f) }()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan Panic, 1)
			defer Handle(func(p Panic) { got <- p })()
			var wg sync.WaitGroup
			wg.Add(1)
			tt.start("reader eth1", func() { panicker(errors.New("boom")) }, &wg)
			wg.Wait()
			p := <-got
			if p.Goroutine != "reader eth1" {
				t.Errorf("goroutine %q, want %q", p.Goroutine, "reader eth1")
			}
			if err, ok := p.Value.(error); !ok || err.Error() != "boom" {
				t.Errorf("value %v, want the error boom", p.Value)
			}
			if !bytes.Contains(p.Stack, []byte("supervise.panicker")) {
				t.Errorf("stack does not show the panicking function:\n%s", p.Stack)
			}
		})
	}
}

// TestNoPanicNoHandler: a goroutine that returns normally never calls
// the handler.
func TestNoPanicNoHandler(t *testing.T) {
	called := false
	defer Handle(func(Panic) { called = true })()
	ran := false
	Run("quiet", func() { ran = true })
	if !ran || called {
		t.Errorf("ran %v, handler called %v; want the function run and no handler call", ran, called)
	}
}

// TestHandleRestores: the function Handle returns puts the previous
// handler back.
func TestHandleRestores(t *testing.T) {
	var got []string
	restoreA := Handle(func(Panic) { got = append(got, "a") })
	restoreB := Handle(func(Panic) { got = append(got, "b") })
	Run("x", func() { panic(1) })
	restoreB()
	Run("x", func() { panic(2) })
	restoreA()
	if strings.Join(got, ",") != "b,a" {
		t.Errorf("handlers called: %v, want b then a", got)
	}
}

// childEnv makes the test binary a child that panics under Run with no
// handler installed.
const childEnv = "SUPERVISE_TEST_UNHANDLED"

// TestUnhandledPanicCrashes: with no handler installed the panic is not
// recovered: the process dies as it would without Run, with the original
// stack.
func TestUnhandledPanicCrashes(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		Run("child", func() { panicker("unhandled") })
		os.Exit(0) // not reached when the panic goes on
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestUnhandledPanicCrashes$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("child: %v, want exit status 2 from the unrecovered panic\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("panic: unhandled")) || !bytes.Contains(out, []byte("supervise.panicker")) {
		t.Errorf("child output lacks the panic and its stack:\n%s", out)
	}
}
