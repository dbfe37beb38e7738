package integration

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swctl/swctl/internal/netnstest"
)

// dialControl connects to the daemon's control socket and sends a version
// request; served reports whether the answer came within d. The
// connection then stays idle; it is closed when the test ends.
func dialControl(t *testing.T, path string, d time.Duration) (c net.Conn, r *bufio.Reader, served bool) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r = bufio.NewReader(c)
	if _, err := c.Write([]byte(`{"version":1,"op":"version"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(d))
	line, err := r.ReadString('\n')
	c.SetReadDeadline(time.Time{})
	return c, r, err == nil && strings.HasPrefix(line, `{"result":`)
}

// servedClient is dialControl for a connection the daemon must serve.
func servedClient(t *testing.T, path string) *bufio.Reader {
	t.Helper()
	_, r, served := dialControl(t, path, 10*time.Second)
	if !served {
		t.Fatal("version on a new control connection: expected a result within 10s, got none")
	}
	return r
}

func TestIntegrationControlSocketLimits(t *testing.T) {
	tb := newTestbed(t, 1)
	tb.daemonArgs = []string{"--max-clients", "3", "--idle-timeout", "2s"}
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	var idle []*bufio.Reader
	for range 3 {
		idle = append(idle, servedClient(t, tb.socket()))
	}
	// Over the cap: a clear error at once, nothing applied.
	want := "too many control connections: the daemon serves at most 3 at once (swctl daemon --max-clients); try again later"
	if _, err := tb.try("bridge", "add", "bridge0", "p1"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("bridge add over the connection cap: expected %q, got %v", want, err)
	}
	// Idle clients are told why and closed.
	for i, r := range idle {
		line, err := r.ReadString('\n')
		if want := `{"error":"control connection closed: no request for 2s (swctl daemon --idle-timeout)"}` + "\n"; err != nil || line != want {
			t.Fatalf("idle client %d: expected %q, got %q (%v)", i, want, line, err)
		}
		if _, err := r.ReadString('\n'); err == nil {
			t.Fatalf("idle client %d after the notice: expected the connection closed", i)
		}
	}
	tb.swctl("bridge", "add", "bridge0", "p1")
	if got := tb.members("bridge0"); !slices.Equal(got, []string{"p1"}) {
		t.Errorf("bridge0 after bridge add under the cap: members %v, want [p1]", got)
	}
}

func TestIntegrationDaemonOutOfDescriptorsNeverAppliesALateRequest(t *testing.T) {
	tb := newTestbed(t, 1)
	tb.daemonArgs = []string{"--max-clients", "1000"} // the descriptors run out first
	tb.start()
	tb.swctl("bridge", "create", "bridge0")
	// Leave the daemon two descriptors, and take them, and any it frees,
	// with idle clients until it cannot accept one more.
	pid := strconv.Itoa(tb.daemon.Process.Pid)
	fds, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	limit := strconv.Itoa(len(fds) + 2)
	if out, err := exec.Command("prlimit", "--pid", pid, "--nofile="+limit+":"+limit).CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	var held []net.Conn
	for served := true; served; {
		if len(held) == 20 {
			t.Fatalf("the daemon still accepts after %d idle clients under a descriptor limit of %s", len(held), limit)
		}
		var c net.Conn
		c, _, served = dialControl(t, tb.socket(), 500*time.Millisecond)
		held = append(held, c)
	}
	// The daemon cannot accept this one: it waits in the listen queue
	// until its client has given up.
	_, err = tb.try("bridge", "add", "bridge0", "p1", "--request-timeout", "1s")
	if err == nil || !strings.Contains(err.Error(), "no reply within 1s") {
		t.Fatalf("bridge add while the daemon is out of descriptors: expected a timeout, got %v", err)
	}
	for _, c := range held {
		c.Close()
	}
	// Now the daemon accepts it, reads the request, and refuses it.
	netnstest.Eventually(t, 10*time.Second, "the late bridge add refused in the daemon's log", func() bool {
		return strings.Contains(tb.log.String(), `msg="control request refused: its deadline passed before it could be served" op=bridge.add`)
	})
	if got := tb.members("bridge0"); len(got) != 0 {
		t.Errorf("bridge0 after a bridge add its client gave up on: members %v, want none", got)
	}
}
