package statedir_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swctl/swctl/platform/statedir"
)

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	unlock, err := statedir.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v, %v; want made with mode 0700", fi, err)
	}
	// flock is per open file: a second lock in this process conflicts too.
	if _, err := statedir.Lock(dir); err == nil || !strings.Contains(err.Error(), "another swctl process holds") {
		t.Fatalf("second Lock = %v, want refused", err)
	}
	unlock()
	unlock2, err := statedir.Lock(dir)
	if err != nil {
		t.Fatalf("Lock after unlock = %v", err)
	}
	unlock2()
}

func TestLockRefusesASymlink(t *testing.T) {
	tests := []struct {
		name   string
		target func(t *testing.T) string // the file the link names
	}{
		{"to an existing file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "passwd")
			if err := os.WriteFile(p, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"to nothing yet", func(t *testing.T) string { return filepath.Join(t.TempDir(), "planted") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := tt.target(t)
			before, beforeErr := os.ReadFile(target)
			lock := filepath.Join(dir, statedir.LockFile)
			if err := os.Symlink(target, lock); err != nil {
				t.Fatal(err)
			}
			unlock, err := statedir.Lock(dir)
			if err == nil {
				unlock()
			}
			want := "state dir " + dir + ": " + lock + " is a symbolic link; remove it (swctl makes the lock file itself)"
			if err == nil || err.Error() != want {
				t.Errorf("Lock:\nexpected %s\ngot      %v", want, err)
			}
			after, afterErr := os.ReadFile(target)
			if string(after) != string(before) || (beforeErr == nil) != (afterErr == nil) {
				t.Errorf("link target %s: expected untouched (%q, %v), got %q, %v", target, before, beforeErr, after, afterErr)
			}
		})
	}
}
