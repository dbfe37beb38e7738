package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/swctl/swctl/internal/config"
)

// TestConfigImportExamples runs the examples of docs/IMPORT.md: in each
// example's directory, swctl config import must print the swctl.conf
// there on stdout and untranslated.txt on stderr, exit 0, and print a
// configuration the daemon reads back as written.
func TestConfigImportExamples(t *testing.T) {
	tests := []struct {
		dir  string
		args []string
	}{
		{"../../docs/import/openbsd", []string{"hostname.bridge0", "hostname.trunk0", "hostname.veb0"}},
		{"../../docs/import/freebsd", []string{"--rc-conf", "rc.conf", "--rc-conf", "rc.conf.local"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.dir), func(t *testing.T) {
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(tt.dir, name))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			wantConf, wantNotes := read("swctl.conf"), read("untranslated.txt")
			t.Chdir(tt.dir)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl", "config", "import"}, tt.args...), &stdout, &stderr)
			if code != exitOK {
				t.Fatalf("exit code: expected 0, got %d (stderr %q)", code, stderr.String())
			}
			if stdout.String() != wantConf {
				t.Errorf("stdout differs from %s/swctl.conf:\nexpected\n%s\ngot\n%s", tt.dir, wantConf, stdout.String())
			}
			if stderr.String() != wantNotes {
				t.Errorf("stderr differs from %s/untranslated.txt:\nexpected\n%s\ngot\n%s", tt.dir, wantNotes, stderr.String())
			}
			c, err := config.Parse(bytes.NewReader(stdout.Bytes()), "swctl.conf")
			if err != nil {
				t.Fatalf("the daemon refuses the output: %v", err)
			}
			if again := c.Format(); !bytes.Equal(again, stdout.Bytes()) {
				t.Errorf("the output does not read back as written:\n%s", again)
			}
		})
	}
}

func TestConfigImportErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	em0 := write("hostname.em0", "up\n")
	rc := write("rc.conf", "sshd_enable=YES\n")
	missing := filepath.Join(dir, "hostname.bridge9")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no input", nil, exitUsage,
			"swctl: config import: give hostname.if files, or --rc-conf FILE (usage: swctl config import [--rc-conf FILE]... [FILE...])\n"},
		{"not a hostname.if file", []string{rc}, exitUsage,
			"swctl: config import: " + rc + ": want an OpenBSD hostname.IF file (such as hostname.bridge0), or --rc-conf " + rc + " for a FreeBSD rc.conf\n"},
		{"a missing file", []string{missing}, exitError,
			"swctl: open " + missing + ": no such file or directory\n"},
		{"nothing to import: the lines are listed, then the error", []string{em0, "--rc-conf", rc}, exitError,
			em0 + ":1: up: not translated: em0 is not a bridge(4), veb(4), trunk(4) or aggr(4) interface\n" +
				"swctl: no bridge or trunk to import (want hostname.bridgeN, hostname.vebN, hostname.trunkN or hostname.aggrN files, or an rc.conf with bridges or laggs)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"swctl", "config", "import"}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code: expected %d, got %d", tt.wantCode, code)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: expected nothing, got %q", stdout.String())
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr:\nexpected %q\ngot      %q", tt.wantStderr, stderr.String())
			}
		})
	}
}
