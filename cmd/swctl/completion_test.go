package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/swctl/swctl/internal/api/apitest"
)

// runAsSwctl makes the test binary behave as swctl (see TestMain), so that
// the completion scripts can call it.
const runAsSwctl = "SWCTL_TEST_RUN_AS_SWCTL"

func TestMain(m *testing.M) {
	if os.Getenv(runAsSwctl) == "1" {
		os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// completionShell runs the bash completion script that "swctl completion
// bash" prints, with swctl on PATH being this test binary.
type completionShell struct {
	// script is the completion script's path.
	script string
	// env is the environment of bash.
	env []string
	// dir is the working directory, holding a few files to complete.
	dir string
	// netns, when set, starts each completion in a network namespace of
	// its own holding completionNetns's interfaces; nil: in the host's.
	netns *syscall.SysProcAttr
}

func newCompletionShell(t *testing.T, socket string, netns *syscall.SysProcAttr) *completionShell {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed to test the bash completion: %v", err)
	}
	var script, stderr bytes.Buffer
	if code := run(context.Background(), []string{"swctl", "completion", "bash"}, &script, &stderr); code != 0 {
		t.Fatalf("swctl completion bash: exit code %d, stderr %q", code, stderr.String())
	}
	tmp := t.TempDir()
	sh := &completionShell{script: filepath.Join(tmp, "swctl.bash"), dir: filepath.Join(tmp, "cwd"), netns: netns}
	if err := os.WriteFile(sh.script, script.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "swctl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sh.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"hostname.bridge0", "hostname.trunk0", "rc.conf"} {
		if err := os.WriteFile(filepath.Join(sh.dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh.env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), runAsSwctl+"=1", "SWCTL_SOCKET="+socket)
	return sh
}

// complete completes the last word of line as bash does at the end of
// it (a line ending in a space completes a new, empty word) and returns
// COMPREPLY.
func (sh *completionShell) complete(t *testing.T, line string) []string {
	t.Helper()
	words := strings.Fields(line)
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	const driver = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
_swctl; printf '%s\n' "${COMPREPLY[@]}"`
	script := driver
	if sh.netns != nil {
		script = completionNetns.setup + " || exit 1\n" + driver
	}
	cmd := exec.Command("bash", append([]string{"--norc", "--noprofile", "-c", script, "bash", sh.script}, words...)...)
	cmd.Env, cmd.Dir, cmd.SysProcAttr = sh.env, sh.dir, sh.netns
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("completing %q: %v (stderr %q)", line, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("completing %q: expected nothing on stderr, got %q", line, stderr.String())
	}
	out := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

// freeHostInterfaces is what a new member may be, for the fake daemon of
// newFake, completing in the host's network namespace: its interfaces
// other than loopback and those the fake reports in use.
func freeHostInterfaces(t *testing.T) []string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	used := []string{"eth1", "eth2", "eth3", "eth4", "eth5", "eth6", "eth7", "eth8", "eth9", "gone0", "veth-long-name", "bridge0", "br1", "trunk0", "trunk1", "trunk2"}
	var out []string
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 && !slices.Contains(used, i.Name) {
			out = append(out, i.Name)
		}
	}
	slices.Sort(out)
	return out
}

func TestBashCompletion(t *testing.T) {
	// Free interfaces are what the completion's network namespace has:
	// its own where the test can make one, so that other test packages'
	// interfaces coming and going meanwhile cannot change them; else the
	// host's, compared with a snapshot before and after (see below).
	netns, why := ownNetns(t)
	free := func() []string { return completionNetns.free }
	if netns == nil {
		t.Logf("completing in the host's network namespace: %s", why)
		free = func() []string { return freeHostInterfaces(t) }
	}
	withDaemon := newCompletionShell(t, apitest.Serve(t, newFake()), netns)
	noDaemon := newCompletionShell(t, apitest.SocketPath(t), netns)
	topLevel := []string{"daemon", "bridge", "trunk", "lb", "port", "stats", "capture", "recover", "selftest", "version", "bench", "config", "completion"}
	bridgeCmds := []string{"create", "destroy", "add", "del", "show", "addr", "static", "deladdr", "flush", "set", "port", "stp", "addspan", "delspan"}
	files := []string{"hostname.bridge0", "hostname.trunk0", "rc.conf"}
	tests := []struct {
		name string
		sh   *completionShell
		line string
		want []string
	}{
		{"commands", withDaemon, "swctl ", topLevel},
		{"command prefix", withDaemon, "swctl tr", []string{"trunk"}},
		{"subcommands", withDaemon, "swctl bridge ", bridgeCmds},
		{"subcommand prefix", withDaemon, "swctl bridge de", []string{"destroy", "del", "deladdr", "delspan"}},
		{"global flags", withDaemon, "swctl -", []string{"--socket", "--request-timeout", "--version", "--help"}},
		{"command flags", withDaemon, "swctl bridge create --", []string{"--local", "--output", "--help"}},
		{"short flag", withDaemon, "swctl bridge show -", []string{"--output", "-o", "--help"}},
		{"flag values", withDaemon, "swctl trunk create t0 --proto l", []string{"loadbalance", "lacp"}},
		{"on|off values", withDaemon, "swctl bridge port bridge0 eth1 --learning ", []string{"on", "off"}},
		{"output values after the arguments", withDaemon, "swctl trunk show trunk0 -o ", []string{"text", "json"}},
		{"bridge names", withDaemon, "swctl bridge show ", []string{"bridge0", "br1"}},
		{"bridge name prefix", withDaemon, "swctl bridge destroy bri", []string{"bridge0"}},
		{"trunk names", withDaemon, "swctl trunk set ", []string{"trunk0", "trunk1", "trunk2"}},
		{"members of the bridge", withDaemon, "swctl bridge del bridge0 ", []string{"eth1", "veth-long-name", "eth2"}},
		{"members repeat", withDaemon, "swctl bridge del bridge0 eth1 ", []string{"eth1", "veth-long-name", "eth2"}},
		{"member after a flag", withDaemon, "swctl bridge static --vlan 5 bridge0 02:00:00:00:00:01 e", []string{"eth1", "eth2"}},
		{"spans of the bridge", withDaemon, "swctl bridge delspan bridge0 ", []string{"eth3", "eth4"}},
		{"ports of the trunk", withDaemon, "swctl trunk del trunk1 ", []string{"eth7", "eth8"}},
		{"ports the daemon has", withDaemon, "swctl port show ", []string{"eth1", "eth3", "bridge0", "gone0", "eth5", "eth9"}},
		{"capture: bridges, then ports", withDaemon, "swctl capture ", []string{"bridge0", "br1", "eth1", "eth3", "gone0", "eth5", "eth9"}},
		{"capture directions", withDaemon, "swctl capture bridge0 --direction ", []string{"in", "out", "both"}},
		{"capture file", withDaemon, "swctl capture bridge0 -w host", []string{"hostname.bridge0", "hostname.trunk0"}},
		{"new members: free interfaces and trunks", withDaemon, "swctl bridge add bridge0 ", append(free(), "trunk0", "trunk1", "trunk2")},
		{"new trunk ports: free interfaces", withDaemon, "swctl trunk create t0 --port ", free()},
		{"new trunk ports after the name", withDaemon, "swctl trunk create t0 eth9 ", free()},
		{"no argument after the last", withDaemon, "swctl bridge addr bridge0 ", nil},
		{"shells", withDaemon, "swctl completion ", []string{"bash", "zsh", "fish"}},
		{"files", withDaemon, "swctl daemon --config ", files},
		{"file prefix", withDaemon, "swctl daemon --config host", []string{"hostname.bridge0", "hostname.trunk0"}},
		{"global --socket picks the daemon", noDaemon, "swctl --socket " + apitest.Serve(t, newFake()) + " trunk show ", []string{"trunk0", "trunk1", "trunk2"}},
		{"files to import", noDaemon, "swctl config import ", files},
		{"more files to import", noDaemon, "swctl config import hostname.bridge0 hostname.t", []string{"hostname.trunk0"}},
		{"an rc.conf to import", noDaemon, "swctl config import --rc-conf r", []string{"rc.conf"}},
		{"unknown command", withDaemon, "swctl explode ", nil},
		{"hidden command not offered", withDaemon, "swctl _", nil},
		{"no daemon: commands", noDaemon, "swctl bridge ", bridgeCmds},
		{"no daemon: flags", noDaemon, "swctl trunk add --", []string{"--priority", "--lacp-port-priority", "--force", "--output", "--help"}},
		{"no daemon: no names", noDaemon, "swctl bridge show ", nil},
		{"no daemon: no interfaces", noDaemon, "swctl bridge add bridge0 ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.sh.complete(t, tt.line)
			// hostCases are the cases whose want is the free host
			// interfaces, followed by that many other names.
			hostCases := map[string]int{"new members: free interfaces and trunks": 3, "new trunk ports: free interfaces": 0, "new trunk ports after the name": 0}
			if extra, ok := hostCases[tt.name]; ok && tt.sh.netns == nil {
				// Other test packages make and remove interfaces in
				// this namespace meanwhile: one that came or went
				// during the completion may or may not be offered;
				// every other must be offered, and nothing else.
				after := append(freeHostInterfaces(t), tt.want[len(tt.want)-extra:]...)
				for _, n := range tt.want {
					if slices.Contains(after, n) && !slices.Contains(got, n) {
						t.Errorf("completing %q: %q, there before and after, not offered (got %q)", tt.line, n, got)
					}
				}
				for _, n := range got {
					if !slices.Contains(tt.want, n) && !slices.Contains(after, n) {
						t.Errorf("completing %q: %q offered, not a free interface (want %q)", tt.line, n, tt.want)
					}
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("completing %q:\nexpected %q\ngot      %q", tt.line, tt.want, got)
			}
		})
	}
}

func TestCompletionScripts(t *testing.T) {
	tests := []struct {
		shell    string
		contains string
	}{
		{"bash", "complete -F _swctl swctl"},
		{"zsh", "#compdef swctl"},
		{"fish", "complete -c swctl"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"swctl", "completion", tt.shell}, &stdout, &stderr)
		if code != 0 || !strings.Contains(stdout.String(), tt.contains) || !strings.Contains(stdout.String(), "__complete --") {
			t.Errorf("swctl completion %s: expected exit 0 and a script with %q calling __complete, got %d, stderr %q:\n%s", tt.shell, tt.contains, code, stderr.String(), stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"swctl", "completion", "tcsh"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("swctl completion tcsh: expected exit code %d, got %d", exitUsage, code)
	}
	if want := "swctl: completion: unknown shell \"tcsh\" (want bash, zsh or fish)\n"; stderr.String() != want {
		t.Errorf("swctl completion tcsh: stderr:\nexpected %q\ngot      %q", want, stderr.String())
	}
}
