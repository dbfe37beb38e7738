package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/swctl/swctl/platform/lladdr"
	"github.com/swctl/swctl/platform/statedir"
)

func TestRecover(t *testing.T) {
	const emptyJSON = "{\n  \"restored\": [],\n  \"skipped\": [],\n  \"absent\": [],\n  \"failed\": []\n}\n"
	missing := filepath.Join(t.TempDir(), "none")
	empty := t.TempDir()
	locked := t.TempDir()
	unlock, err := statedir.Lock(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "no state directory", args: []string{"recover", "--state-dir", missing}, wantStdout: "nothing to recover\n"},
		{name: "no state directory json", args: []string{"recover", "--state-dir", missing, "-o", "json"}, wantStdout: emptyJSON},
		{name: "empty state directory", args: []string{"recover", "--state-dir=" + empty}, wantStdout: "nothing to recover\n"},
		{name: "daemon running", args: []string{"recover", "--state-dir", locked}, wantCode: 1,
			wantStderr: "swctl: state dir " + locked + ": a swctl daemon is running (it holds " + locked + "/lock); stop it first\n"},
		{name: "daemon running json", args: []string{"recover", "-o", "json", "--state-dir", locked}, wantCode: 1, wantStdout: emptyJSON,
			wantStderr: `{"error":"state dir ` + locked + `: a swctl daemon is running (it holds ` + locked + `/lock); stop it first"}` + "\n"},
		{name: "arguments", args: []string{"recover", "x"}, wantCode: 2,
			wantStderr: "swctl: recover: too many arguments (usage: swctl recover )\n"},
		{name: "empty state dir", args: []string{"recover", "--state-dir", ""}, wantCode: 2,
			wantStderr: "swctl: --state-dir: empty path\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl"}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code: expected %d, got %d (stderr %q)", tt.wantCode, code, stderr.String())
			}
			if stdout.String() != tt.wantStdout {
				t.Errorf("stdout:\nexpected %q\ngot      %q", tt.wantStdout, stdout.String())
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr:\nexpected %q\ngot      %q", tt.wantStderr, stderr.String())
			}
		})
	}
}

func TestRecoverDefaultStateDir(t *testing.T) {
	var gotDir string
	recoverFunc = func(dir string, _ *slog.Logger) (lladdr.Report, error) {
		gotDir = dir
		return lladdr.Report{}, errors.New("lladdr eth1: restore 02:00:00:00:00:01: operation not permitted")
	}
	defer func() { recoverFunc = lladdr.Recover }()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"swctl", "recover"}, &stdout, &stderr)
	if code != 1 || gotDir != defaultStateDir {
		t.Errorf("expected exit 1 and state dir %s, got %d and %q", defaultStateDir, code, gotDir)
	}
	if want := "swctl: lladdr eth1: restore 02:00:00:00:00:01: operation not permitted\n"; stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("expected no stdout and stderr %q, got %q and %q", want, stdout.String(), stderr.String())
	}
}
