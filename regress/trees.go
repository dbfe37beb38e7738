package regress

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Roles of the two binaries a comparison drives.
const (
	// RolePatch is the binary with the change under test.
	RolePatch = "patch"
	// RoleNoPatch is the binary without it.
	RoleNoPatch = "no patch"
)

// ABSpec says what "patch" and "no patch" are.
type ABSpec struct {
	// Repo is a directory inside the swctl git repository.
	Repo string
	// Patch, when set, is a diff file: "no patch" is the tree as checked
	// out, "patch" the same tree with the diff applied in a temporary
	// git worktree.
	Patch string
	// Base, when set, is a git revision: "no patch" is that revision
	// built in a temporary worktree, "patch" the tree as checked out.
	Base string
}

// Mode names the comparison: "A/A" (both roles the same binary: the
// noise floor), "patch" or "base".
func (s ABSpec) Mode() string {
	switch {
	case s.Patch != "":
		return "patch"
	case s.Base != "":
		return "base"
	}
	return "A/A"
}

// Tree is the source of one role's binary.
type Tree struct {
	// Role is RolePatch or RoleNoPatch.
	Role string `json:"role"`
	// Dir is the source tree the binary is built from.
	Dir string `json:"dir"`
	// Desc says in words what the tree is.
	Desc string `json:"desc"`
	// Revision is the commit the tree starts from.
	Revision string `json:"revision"`
	// Dirty says whether uncommitted changes of the checked-out tree
	// are part of it.
	Dirty bool `json:"dirty"`
	// Binary is the built swctl, set by Build.
	Binary string `json:"binary"`
}

// Trees are the two sources of a comparison and the temporary worktree
// they may need; Close removes it.
type Trees struct {
	// Mode is ABSpec.Mode.
	Mode string `json:"mode"`
	// Patch is the "patch" tree.
	Patch Tree `json:"patch"`
	// NoPatch is the "no patch" tree.
	NoPatch Tree `json:"no_patch"`
	// GOOS and GOARCH, when set, are the system the binaries are built
	// for (a real device under test); empty means the harness's own.
	GOOS string `json:"goos,omitempty"`
	// GOARCH is the architecture the binaries are built for.
	GOARCH string `json:"goarch,omitempty"`
	// top is the repository's top directory.
	top string
	// tmp is the temporary directory holding the worktree and binaries.
	tmp string
	// worktree is the temporary worktree's directory, "" when none.
	worktree string
	// run runs and records commands.
	run *Commands
}

// Commands runs external commands and keeps a record of them for
// results.json.
type Commands struct {
	// mu guards Log while Output runs from several goroutines (the
	// bulk suite's clients at once).
	mu sync.Mutex
	// Log holds every command run, as one shell-like line each.
	Log []string
}

// record adds line to Log.
func (c *Commands) record(line string) {
	c.mu.Lock()
	c.Log = append(c.Log, line)
	c.mu.Unlock()
}

// run runs args like Output and drops stdout (testbed.change's run).
func (c *Commands) run(ctx context.Context, args ...string) error {
	_, err := c.Output(ctx, "", nil, args...)
	return err
}

// Output runs args in dir (or the current directory when dir is "") and
// returns its stdout; the error names the command and carries stderr.
// Several goroutines may call it at once.
func (c *Commands) Output(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	line := strings.Join(args, " ")
	logged := line
	if dir != "" {
		logged = "(cd " + dir + " && " + line + ")"
	}
	c.record(logged)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return capture(cmd, line)
}

// capture runs cmd and returns its stdout; the error is desc's, with
// cmd's error and stderr.
func capture(cmd *exec.Cmd, desc string) ([]byte, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s: %v: %s", desc, err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// PrepareTrees makes the trees spec asks for, with a temporary worktree
// under a new directory in tmpRoot ("" = the system's) when needed. On
// error nothing temporary is left behind.
func PrepareTrees(ctx context.Context, spec ABSpec, tmpRoot string, run *Commands) (_ *Trees, err error) {
	if spec.Patch != "" && spec.Base != "" {
		return nil, fmt.Errorf("regress: PATCH and BASE together: give one of them")
	}
	out, err := run.Output(ctx, spec.Repo, nil, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("regress: %s is not in a git repository: %w", spec.Repo, err)
	}
	t := &Trees{Mode: spec.Mode(), top: strings.TrimSpace(string(out)), run: run}
	if t.tmp, err = os.MkdirTemp(tmpRoot, "swctl-regress-"); err != nil {
		return nil, fmt.Errorf("regress: temporary directory: %w", err)
	}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	head, err := t.git(ctx, t.top, "rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	status, err := t.git(ctx, t.top, "status", "--porcelain")
	if err != nil {
		return nil, err
	}
	current := Tree{Dir: t.top, Revision: head, Dirty: status != "", Desc: short(head)}
	if current.Dirty {
		current.Desc += " + uncommitted changes"
	}
	current.Desc = "the tree as checked out (" + current.Desc + ")"
	switch t.Mode {
	case "A/A":
		t.Patch, t.NoPatch = current, current
	case "patch":
		abs, err := filepath.Abs(spec.Patch)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("regress: patch %s: %w", spec.Patch, err)
		}
		if err := t.addWorktree(ctx, head); err != nil {
			return nil, err
		}
		if err := t.copyWorkingChanges(ctx); err != nil {
			return nil, err
		}
		if _, err := t.git(ctx, t.worktree, "apply", "--binary", abs); err != nil {
			return nil, fmt.Errorf("regress: patch %s does not apply to the tree as checked out: %w", spec.Patch, err)
		}
		t.NoPatch = current
		t.Patch = Tree{Dir: t.worktree, Revision: head, Dirty: current.Dirty, Desc: current.Desc + " + " + filepath.Base(spec.Patch)}
	case "base":
		rev, err := t.git(ctx, t.top, "rev-parse", "--verify", "--quiet", spec.Base+"^{commit}")
		if err != nil {
			return nil, fmt.Errorf("regress: base %s: no such revision", spec.Base)
		}
		if err := t.addWorktree(ctx, rev); err != nil {
			return nil, err
		}
		t.Patch = current
		t.NoPatch = Tree{Dir: t.worktree, Revision: rev, Desc: "base " + spec.Base + " (" + short(rev) + ")"}
	}
	t.Patch.Role, t.NoPatch.Role = RolePatch, RoleNoPatch
	return t, nil
}

func short(rev string) string { return rev[:min(12, len(rev))] }

// binaryFor returns the swctl binary that plays role (RolePatch or
// RoleNoPatch).
func (t *Trees) binaryFor(role string) string {
	if role == RolePatch {
		return t.Patch.Binary
	}
	return t.NoPatch.Binary
}

// git runs git in dir and returns its trimmed stdout.
func (t *Trees) git(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := t.run.Output(ctx, "", nil, append([]string{"git", "-C", dir}, args...)...)
	return strings.TrimSpace(string(out)), err
}

// addWorktree checks rev out, detached, in a temporary worktree.
func (t *Trees) addWorktree(ctx context.Context, rev string) error {
	dir := filepath.Join(t.tmp, "tree")
	if _, err := t.git(ctx, t.top, "worktree", "add", "--detach", dir, rev); err != nil {
		return fmt.Errorf("regress: temporary worktree at %s: %w", short(rev), err)
	}
	t.worktree = dir
	return nil
}

// copyWorkingChanges makes the worktree (at HEAD) equal to the tree as
// checked out: the diff against HEAD of the tracked files and the
// untracked ones that are not ignored, made in a temporary index (the
// repository's own stays as it is) and applied in the worktree.
func (t *Trees) copyWorkingChanges(ctx context.Context) error {
	// env names the index file on the command line, where the command
	// log shows it.
	git := []string{"env", "GIT_INDEX_FILE=" + filepath.Join(t.tmp, "index"), "git", "-C", t.top}
	var diff []byte
	for _, args := range [][]string{{"read-tree", "HEAD"}, {"add", "-A"}, {"diff", "--cached", "--binary", "HEAD"}} {
		var err error
		if diff, err = t.run.Output(ctx, "", nil, append(slices.Clone(git), args...)...); err != nil {
			return fmt.Errorf("regress: diff of the working tree: %w", err)
		}
	}
	if len(diff) == 0 {
		return nil
	}
	f := filepath.Join(t.tmp, "working-tree.diff")
	if err := os.WriteFile(f, diff, 0o600); err != nil {
		return fmt.Errorf("regress: working tree diff: %w", err)
	}
	if _, err := t.git(ctx, t.worktree, "apply", "--binary", f); err != nil {
		return fmt.Errorf("regress: working tree diff does not apply to HEAD: %w", err)
	}
	return nil
}

// Build builds swctl from each tree into the temporary directory, once
// when both roles share a tree, and sets the trees' Binary.
func (t *Trees) Build(ctx context.Context) error {
	for _, tr := range []*Tree{&t.NoPatch, &t.Patch} {
		if tr == &t.Patch && t.Patch.Dir == t.NoPatch.Dir {
			t.Patch.Binary = t.NoPatch.Binary
			break
		}
		var err error
		if tr.Binary, err = t.build(ctx, tr.Dir, "swctl-"+strings.ReplaceAll(tr.Role, " ", ""), t.GOOS, t.GOARCH); err != nil {
			return fmt.Errorf("regress: build %s swctl in %s: %w", tr.Role, tr.Dir, err)
		}
	}
	return nil
}

// build builds swctl from the tree in dir for goos and goarch ("" = the
// harness's own) and returns the binary, name in the temporary directory.
func (t *Trees) build(ctx context.Context, dir, name, goos, goarch string) (string, error) {
	env := []string{"CGO_ENABLED=0"}
	for _, kv := range [][2]string{{"GOOS", goos}, {"GOARCH", goarch}} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	out := filepath.Join(t.tmp, name)
	if _, err := t.run.Output(ctx, dir, env, "go", "build", "-trimpath", "-o", out, "./cmd/swctl"); err != nil {
		return "", err
	}
	return out, nil
}

// Close removes the temporary worktree (also from git's list) and the
// temporary directory. It is safe to call more than once.
func (t *Trees) Close() error {
	var first error
	if t.worktree != "" {
		// Not under the run's context: cleanup must happen after Ctrl-C.
		_, first = t.git(context.Background(), t.top, "worktree", "remove", "--force", t.worktree)
		t.git(context.Background(), t.top, "worktree", "prune")
		t.worktree = ""
	}
	if t.tmp != "" {
		first = cmp.Or(first, os.RemoveAll(t.tmp))
		t.tmp = ""
	}
	return first
}
