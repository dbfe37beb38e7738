// Package dist holds the service files make install installs (the
// systemd unit, the OpenBSD and FreeBSD rc.d scripts) and the test of
// make install itself.
package dist

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swctl/swctl/internal/netnstest"
)

// root is the repository, where the Makefile is.
const root = ".."

// makeInstall runs make install with the variables given, and fails the
// test if it fails.
func makeInstall(t *testing.T, vars ...string) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-C", root, "install"}, vars...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install %s: %v\n%s", strings.Join(vars, " "), err, out)
	}
}

// installedFiles returns the regular files under dir, by path relative to
// dir, with their permission bits.
func installedFiles(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = info.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMakeInstall installs into a DESTDIR for each system's layout and
// checks the tree: exactly the expected files with their modes, the
// manual pages and completions as in the repository, a binary that runs,
// and service files that name the installed binary and pass a shell
// syntax check.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds swctl")
	}
	netnstest.RequireTool(t, "make", "make")
	bin := filepath.Join(t.TempDir(), "swctl")
	// Files every layout installs, by source, relative to PREFIX.
	common := func(man string) map[string]string {
		return map[string]string{
			"sbin/swctl":                                 "",
			man + "/man8/swctl.8":                        "docs/man/swctl.8",
			man + "/man5/swctl.conf.5":                   "docs/man/swctl.conf.5",
			"share/bash-completion/completions/swctl":    "cmd/swctl/completion/swctl.bash",
			"share/zsh/site-functions/_swctl":            "cmd/swctl/completion/swctl.zsh",
			"share/fish/vendor_completions.d/swctl.fish": "cmd/swctl/completion/swctl.fish",
		}
	}
	tests := []struct {
		system string
		prefix string
		man    string
		// service is the service file, relative to DESTDIR.
		service string
		// serviceMode is its mode.
		serviceMode fs.FileMode
		// serviceHas are lines it must contain.
		serviceHas []string
	}{
		{
			system: "Linux", prefix: "/usr/local", man: "share/man",
			service: "usr/local/lib/systemd/system/swctl.service", serviceMode: 0o644,
			serviceHas: []string{"ExecStart=/usr/local/sbin/swctl daemon --config /etc/swctl/swctl.conf --state-dir /var/lib/swctl --socket /run/swctl/swctl.sock"},
		},
		{
			system: "Linux", prefix: "/usr", man: "share/man",
			service: "usr/lib/systemd/system/swctl.service", serviceMode: 0o644,
			serviceHas: []string{"ExecStart=/usr/sbin/swctl daemon --config /etc/swctl/swctl.conf --state-dir /var/lib/swctl --socket /run/swctl/swctl.sock"},
		},
		{
			system: "OpenBSD", prefix: "/usr/local", man: "man",
			service: "etc/rc.d/swctld", serviceMode: 0o555,
			serviceHas: []string{`daemon="/usr/local/sbin/swctl daemon"`, ". /etc/rc.d/rc.subr", "rc_bg=YES", "rc_cmd $1"},
		},
		{
			system: "FreeBSD", prefix: "/opt/sw", man: "share/man",
			service: "opt/sw/etc/rc.d/swctld", serviceMode: 0o555,
			serviceHas: []string{
				`rcvar="swctld_enable"`, `: ${swctld_enable:="NO"}`,
				`: ${swctld_config:="/opt/sw/etc/swctl/swctl.conf"}`, `procname="/opt/sw/sbin/swctl"`,
				`command_args="-S -T ${name} -p ${pidfile} ${procname} daemon --config ${swctld_config} ${swctld_flags}"`,
				`run_rc_command "$1"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.system+" "+tt.prefix, func(t *testing.T) {
			dest := t.TempDir()
			makeInstall(t, "DESTDIR="+dest, "PREFIX="+tt.prefix, "SYSTEM="+tt.system, "BIN="+bin)
			prefix := strings.TrimPrefix(tt.prefix, "/")
			sources := map[string]string{}
			for rel, src := range common(tt.man) {
				sources[filepath.Join(prefix, rel)] = src
			}
			want := map[string]fs.FileMode{tt.service: tt.serviceMode}
			for rel, src := range sources {
				want[rel] = 0o644
				if src == "" {
					want[rel] = 0o755
				}
			}
			got := installedFiles(t, dest)
			for rel, mode := range want {
				if m, ok := got[rel]; !ok {
					t.Errorf("%s: not installed", rel)
				} else if m != mode {
					t.Errorf("%s: expected mode %v, got %v", rel, mode, m)
				}
			}
			for rel := range got {
				if _, ok := want[rel]; !ok {
					t.Errorf("%s: installed, but not expected", rel)
				}
			}
			for rel, src := range sources {
				if src == "" {
					continue
				}
				a, errA := os.ReadFile(filepath.Join(root, src))
				b, errB := os.ReadFile(filepath.Join(dest, rel))
				if errA != nil || errB != nil || !bytes.Equal(a, b) {
					t.Errorf("%s: expected a copy of %s (%v, %v)", rel, src, errA, errB)
				}
			}
			script, err := exec.Command(filepath.Join(dest, prefix, "sbin/swctl"), "completion", "bash").Output()
			if want, _ := os.ReadFile(filepath.Join(root, "cmd/swctl/completion/swctl.bash")); err != nil || !bytes.Equal(script, want) {
				t.Errorf("installed swctl completion bash: expected the bash script, got %v:\n%s", err, script)
			}
			service, err := os.ReadFile(filepath.Join(dest, tt.service))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range tt.serviceHas {
				if !hasLine(string(service), line) {
					t.Errorf("%s: expected the line %q in:\n%s", tt.service, line, service)
				}
			}
			if tt.system != "Linux" {
				if out, err := exec.Command("sh", "-n", filepath.Join(dest, tt.service)).CombinedOutput(); err != nil {
					t.Errorf("sh -n %s: %v\n%s", tt.service, err, out)
				}
			}
		})
	}
}

// hasLine reports whether text has line as one of its lines.
func hasLine(text, line string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// TestSystemdUnitVerifies installs into a temporary PREFIX (no DESTDIR,
// so that the unit names a binary that exists) and runs systemd-analyze
// verify on the unit, with the installed manual pages on MANPATH for its
// Documentation= check.
func TestSystemdUnitVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds swctl")
	}
	netnstest.RequireTool(t, "make", "make")
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed (the unit is checked where systemd is)")
	}
	prefix := t.TempDir()
	makeInstall(t, "PREFIX="+prefix, "SYSTEM=Linux", "BIN="+filepath.Join(t.TempDir(), "swctl"))
	cmd := exec.Command("systemd-analyze", "verify", filepath.Join(prefix, "lib/systemd/system/swctl.service"))
	cmd.Env = append(os.Environ(), "MANPATH="+filepath.Join(prefix, "share/man"))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: expected no complaint, got %v:\n%s", err, out)
	}
}
