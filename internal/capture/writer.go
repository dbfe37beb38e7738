package capture

import (
	"bufio"
	"fmt"
	"io"
	"runtime"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/swctl/swctl/bridge"
)

// Writer writes captured frames as a pcapng stream (one interface per
// port and direction: the port's name, and a description saying which
// way) or as a classic pcap file (no ports, no directions), with
// nanosecond timestamps, through gopacket's pcapgo. tshark reads either
// from a file or from a pipe (`tshark -r -`).
type Writer struct {
	// w buffers the output; Flush empties it.
	w *bufio.Writer
	// target is what was captured (a bridge or a port), the name of the
	// only interface of a pcapng file that got no frame.
	target string
	// snaplen is written in the headers.
	snaplen int
	// ng is the pcapng writer, made with the first frame's interface
	// (nil before); pcap the pcap writer (nil for pcapng).
	ng   *pcapgo.NgWriter
	pcap *pcapgo.Writer
	// ifaces are the pcapng interfaces by port and direction.
	ifaces map[ifaceKey]int
}

// ifaceKey names a pcapng interface.
type ifaceKey struct {
	port string
	dir  bridge.Direction
}

// NewWriter returns a Writer of the frames of target to w: pcapng, or
// pcap when pcap is set. A pcap file header is written at once; a pcapng
// section starts with the first frame (or at Close).
func NewWriter(w io.Writer, target string, snaplen int, pcap bool) (*Writer, error) {
	cw := &Writer{w: bufio.NewWriterSize(w, 64<<10), target: target, snaplen: snaplen, ifaces: map[ifaceKey]int{}}
	if pcap {
		cw.pcap = pcapgo.NewWriterNanos(cw.w)
		if err := cw.pcap.WriteFileHeader(uint32(snaplen), layers.LinkTypeEthernet); err != nil {
			return nil, err
		}
	}
	return cw, nil
}

// ngInterface describes a pcapng interface.
func (cw *Writer) ngInterface(name, desc string) pcapgo.NgInterface {
	return pcapgo.NgInterface{Name: name, Description: desc, OS: runtime.GOOS, LinkType: layers.LinkTypeEthernet,
		SnapLength: uint32(cw.snaplen), TimestampResolution: 9}
}

// interfaceOf returns the pcapng interface of frames of port in dir,
// adding it (and starting the section) when it is new.
func (cw *Writer) interfaceOf(port string, dir bridge.Direction) (int, error) {
	k := ifaceKey{port, dir}
	if id, ok := cw.ifaces[k]; ok {
		return id, nil
	}
	way := "received by"
	if dir == bridge.Out {
		way = "sent by"
	}
	intf := cw.ngInterface(port, fmt.Sprintf("frames %s %s (swctl capture %s)", way, port, cw.target))
	var id int
	if cw.ng == nil {
		ng, err := pcapgo.NewNgWriterInterface(cw.w, intf, ngOptions())
		if err != nil {
			return 0, err
		}
		cw.ng = ng
	} else {
		var err error
		if id, err = cw.ng.AddInterface(intf); err != nil {
			return 0, err
		}
	}
	cw.ifaces[k] = id
	return id, nil
}

// ngOptions describe the section: its application is swctl.
func ngOptions() pcapgo.NgWriterOptions {
	o := pcapgo.DefaultNgWriterOptions
	o.SectionInfo.Application = "swctl capture"
	return o
}

// Write writes one frame.
func (cw *Writer) Write(f *Frame) error {
	ci := gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: f.Len}
	if cw.pcap != nil {
		return cw.pcap.WritePacket(ci, f.Data)
	}
	id, err := cw.interfaceOf(f.Port, f.Dir)
	if err != nil {
		return err
	}
	ci.InterfaceIndex = id
	return cw.ng.WritePacket(ci, f.Data)
}

// Flush writes out what is buffered: call it before waiting for more
// frames, so that a reader at the other end of a pipe sees those written.
func (cw *Writer) Flush() error {
	if cw.ng != nil {
		if err := cw.ng.Flush(); err != nil {
			return err
		}
	}
	return cw.w.Flush()
}

// Close finishes the output: a pcapng stream that got no frame gets its
// section and one interface, named after the target, so that it is a
// valid file. It does not close the underlying writer.
func (cw *Writer) Close() error {
	if cw.pcap == nil && cw.ng == nil {
		ng, err := pcapgo.NewNgWriterInterface(cw.w, cw.ngInterface(cw.target, "swctl capture "+cw.target), ngOptions())
		if err != nil {
			return err
		}
		cw.ng = ng
	}
	return cw.Flush()
}
