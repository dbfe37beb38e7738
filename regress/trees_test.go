package regress

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tempRepo makes a git repository with one commit of a.txt ("one\n"),
// then a working-tree change (a.txt "one\ntwo\n") and an untracked file
// new.txt.
func tempRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	sh := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh("git", "init", "-q")
	write("a.txt", "one\n")
	sh("git", "add", "a.txt")
	sh("git", "commit", "-qm", "one")
	sh("git", "tag", "v1")
	write("a.txt", "one\ntwo\n")
	write("new.txt", "untracked\n")
	return dir
}

func readIn(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPrepareTreesPatch(t *testing.T) {
	repo := tempRepo(t)
	patch := filepath.Join(t.TempDir(), "fix.diff")
	os.WriteFile(patch, []byte("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n"), 0o644)
	run := &Commands{}
	tr, err := PrepareTrees(context.Background(), ABSpec{Repo: repo, Patch: patch}, t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Mode != "patch" || tr.NoPatch.Dir == tr.Patch.Dir || !tr.NoPatch.Dirty {
		t.Fatalf("trees: %+v", tr)
	}
	// No patch is the tree as checked out, untouched.
	if got := readIn(t, tr.NoPatch.Dir, "a.txt"); got != "one\ntwo\n" {
		t.Errorf("no patch a.txt = %q, want the working tree's %q", got, "one\ntwo\n")
	}
	// Patch is the tree as checked out (changes and untracked files)
	// plus fix.diff.
	if got := readIn(t, tr.Patch.Dir, "a.txt"); got != "one\ntwo\nthree\n" {
		t.Errorf("patch a.txt = %q, want %q", got, "one\ntwo\nthree\n")
	}
	if got := readIn(t, tr.Patch.Dir, "new.txt"); got != "untracked\n" {
		t.Errorf("patch new.txt = %q, want the untracked file copied", got)
	}
	if !strings.Contains(strings.Join(run.Log, "\n"), "worktree add --detach") {
		t.Errorf("commands run: want a git worktree add, got:\n%s", strings.Join(run.Log, "\n"))
	}
	wt := tr.Patch.Dir
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("after Close the worktree %s still exists (%v)", wt, err)
	}
	out, _ := exec.Command("git", "-C", repo, "worktree", "list").Output()
	if strings.Count(string(out), "\n") != 1 {
		t.Errorf("after Close git still lists worktrees:\n%s", out)
	}
}

func TestPrepareTreesBaseAndAA(t *testing.T) {
	repo := tempRepo(t)
	tr, err := PrepareTrees(context.Background(), ABSpec{Repo: repo, Base: "v1"}, t.TempDir(), &Commands{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if got := readIn(t, tr.NoPatch.Dir, "a.txt"); got != "one\n" {
		t.Errorf("base no patch a.txt = %q, want v1's %q", got, "one\n")
	}
	if tr.Patch.Dir != tr.NoPatch.Dir && readIn(t, tr.Patch.Dir, "a.txt") != "one\ntwo\n" {
		t.Errorf("base patch tree is not the working tree")
	}

	aa, err := PrepareTrees(context.Background(), ABSpec{Repo: repo}, t.TempDir(), &Commands{})
	if err != nil {
		t.Fatal(err)
	}
	defer aa.Close()
	if aa.Mode != "A/A" || aa.Patch.Dir != aa.NoPatch.Dir || aa.Patch.Role != RolePatch || aa.NoPatch.Role != RoleNoPatch {
		t.Errorf("A/A trees: %+v", aa)
	}
}

func TestPrepareTreesErrors(t *testing.T) {
	repo := tempRepo(t)
	bad := filepath.Join(t.TempDir(), "bad.diff")
	os.WriteFile(bad, []byte("--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,2 @@\n nothing-like-this\n+x\n"), 0o644)
	tmp := t.TempDir()
	for _, c := range []struct {
		name string
		spec ABSpec
		want string
	}{
		{"both", ABSpec{Repo: repo, Patch: bad, Base: "v1"}, "PATCH and BASE together"},
		{"missing patch", ABSpec{Repo: repo, Patch: "/nonexistent.diff"}, "patch /nonexistent.diff"},
		{"patch does not apply", ABSpec{Repo: repo, Patch: bad}, "does not apply"},
		{"no such base", ABSpec{Repo: repo, Base: "v9"}, "base v9: no such revision"},
		{"not a repo", ABSpec{Repo: t.TempDir()}, "not in a git repository"},
	} {
		_, err := PrepareTrees(context.Background(), c.spec, tmp, &Commands{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Every failure cleaned up after itself.
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("failed preparations left %d entries in %s", len(ents), tmp)
	}
	out, _ := exec.Command("git", "-C", repo, "worktree", "list").Output()
	if strings.Count(string(out), "\n") != 1 {
		t.Errorf("failed preparations left worktrees:\n%s", out)
	}
}
