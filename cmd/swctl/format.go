package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/swctl/swctl/internal/api"
)

// versionOutput is what swctl version prints.
type versionOutput struct {
	// VersionInfo describes this binary.
	api.VersionInfo
	// Daemon describes the running daemon; nil when it could not be asked.
	Daemon *api.VersionInfo `json:"daemon"`
	// DaemonError says why the daemon could not be asked.
	DaemonError string `json:"daemon_error,omitempty"`
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", out)
	return err
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// formatBridges writes one block per bridge: its settings, then a table
// of its members.
func formatBridges(w io.Writer, bs []api.BridgeInfo) error {
	if len(bs) == 0 {
		_, err := fmt.Fprintln(w, "no bridges")
		return err
	}
	for i, b := range bs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		t := newTable(w)
		fmt.Fprintf(t, "bridge %s\n", b.Name)
		timeout := fmt.Sprintf("%d s", b.Timeout)
		if b.Timeout == 0 {
			timeout = "0 (never age)"
		}
		fmt.Fprintf(t, "  timeout\t%s\n", timeout)
		fmt.Fprintf(t, "  maxaddr\t%d\n", b.MaxAddr)
		local := "none"
		if b.Local != "" {
			local = strings.TrimSpace(b.Local + " " + b.LocalMAC)
		}
		fmt.Fprintf(t, "  local\t%s\n", local)
		fmt.Fprintf(t, "  addresses\t%d (exceeded %d)\n", b.Addresses, b.Exceeded)
		fmt.Fprintf(t, "  frames\t%d forwarded, %d flooded, %d dropped\n", b.Forwarded, b.Flooded, b.Dropped)
		spans := "none"
		if len(b.Spans) > 0 {
			spans = strings.Join(b.Spans, " ")
		}
		fmt.Fprintf(t, "  spans\t%s\n", spans)
		formatSTPLines(t, b)
		if err := t.Flush(); err != nil {
			return err
		}
		if len(b.Ports) == 0 {
			fmt.Fprintln(w, "  no ports")
			continue
		}
		if b.STP != nil {
			if err := formatSTPPorts(w, b.Ports); err != nil {
				return err
			}
			continue
		}
		t = newTable(w)
		fmt.Fprintln(t, "  PORT\tFLAGS\tLINK")
		for _, p := range b.Ports {
			flags := "-"
			if len(p.Flags) > 0 {
				flags = strings.Join(p.Flags, ",")
			}
			fmt.Fprintf(t, "  %s\t%s\t%s\n", p.Name, flags, p.Link)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// formatAddrs writes the address table as one page.
func formatAddrs(w io.Writer, as []api.AddrInfo) error {
	t := &addrText{w: w}
	if err := t.write(as); err != nil {
		return err
	}
	return t.close()
}

// addrWriter writes the address table a page at a time.
type addrWriter interface {
	// write adds a page of entries.
	write(page []api.AddrInfo) error
	// close ends the table.
	close() error
}

// addrText writes the address table as columns. Each page is aligned on
// its own: a page is all this command holds.
type addrText struct {
	// w is the output.
	w io.Writer
	// started is set once the header is out.
	started bool
}

func (a *addrText) write(page []api.AddrInfo) error {
	t := newTable(a.w)
	if !a.started {
		fmt.Fprintln(t, "MAC\tVLAN\tPORT\tAGE\tFLAGS")
		a.started = true
	}
	for _, e := range page {
		age, flags := "-", "learned"
		if e.Age != nil {
			age = fmt.Sprintf("%ds", *e.Age)
		}
		if e.Static {
			flags = "static"
		}
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\t%s\n", e.MAC, e.VLAN, e.Port, age, flags)
	}
	return t.Flush()
}

func (a *addrText) close() error {
	if !a.started {
		return a.write(nil)
	}
	return nil
}

// addrJSON writes the address table as one JSON array, as writeJSON would
// write the whole list, an entry at a time.
type addrJSON struct {
	// w is the output.
	w io.Writer
	// n counts the entries written.
	n int
}

func (a *addrJSON) write(page []api.AddrInfo) error {
	for _, e := range page {
		b, err := json.MarshalIndent(e, "  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n  "
		if a.n == 0 {
			sep = "[\n  "
		}
		a.n++
		if _, err := fmt.Fprintf(a.w, "%s%s", sep, b); err != nil {
			return err
		}
	}
	return nil
}

func (a *addrJSON) close() error {
	end := "\n]\n"
	if a.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(a.w, end)
	return err
}

// formatPorts writes the port table.
func formatPorts(w io.Writer, ps []api.PortInfo) error {
	t := newTable(w)
	fmt.Fprintln(t, "NAME\tBRIDGE\tLINK\tPROMISC\tRX-PKTS\tRX-BYTES\tTX-PKTS\tTX-BYTES\tRX-DROP\tBAD-OFFLOAD\tTX-DROP\tRING-DROP\tERRORS")
	for _, p := range ps {
		bridge := p.Bridge
		if bridge == "" {
			bridge = "-"
		}
		// Any role but a bridge member's is shown, including roles this
		// client does not know.
		if p.Role != api.RoleMember && p.Role != "" {
			bridge += " (" + p.Role + ")"
		}
		promisc := "no"
		if p.Promisc {
			promisc = "yes"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Name, bridge, p.Link, promisc,
			p.RxPackets, p.RxBytes, p.TxPackets, p.TxBytes, p.RxDropped, p.RxBadOffload, p.TxDropped, p.RingDropped, p.Errors)
	}
	return t.Flush()
}

// versionLine describes one build: "swctl v0.1.0 (revision 0123abcd,
// go1.26.0, protocol 1)".
func versionLine(who string, v api.VersionInfo) string {
	s := fmt.Sprintf("%s %s (", who, v.Version)
	if v.Revision != "" {
		s += "revision " + v.Revision + ", "
	}
	return s + fmt.Sprintf("%s, protocol %d)", v.Go, v.Protocol)
}

// formatVersion writes the client's version and the daemon's.
func formatVersion(w io.Writer, v versionOutput) error {
	_, err := fmt.Fprintln(w, versionLine("swctl", v.VersionInfo))
	if v.Daemon != nil {
		_, err = fmt.Fprintln(w, versionLine("daemon", *v.Daemon))
	}
	// Without a daemon, the command's error says why, on stderr.
	return err
}
