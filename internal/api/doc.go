// Package api is swctl's control protocol: the typed requests and results,
// the server the daemon runs on its unix socket, and the client the CLI and
// the tests use.
//
// The wire format is newline-delimited JSON over a unix stream socket. A
// client sends one request per line,
//
//	{"version":1,"op":"bridge.add","args":{"name":"bridge0","ifaces":["eth1","eth2"]}}
//
// and the server answers each with one line, in order:
//
//	{"result":null}
//	{"error":"bridge0: add eth9: no such interface"}
//
// A connection may carry any number of requests. A request line is at most
// MaxRequestSize bytes; a longer one gets an error reply and the connection
// is closed. Malformed JSON, an unknown op, an unsupported version, unknown
// or missing fields each get an error reply; the connection stays usable.
//
// A request may carry a deadline, when its client stops waiting:
//
//	{"version":1,"op":"bridge.add","args":{...},"deadline":"2025-01-02T03:04:05.5Z"}
//
// The server calls the handler for one request at a time and refuses a
// request whose deadline has passed when its turn comes; the handler gets
// the deadline on its context and undoes a change it overtakes, so a
// client that gave up never has its request applied later. A connection that sends no
// request for Server.IdleTimeout gets an error line and is closed; one
// over Server.MaxConns gets an error line naming the limit and is closed
// at once. Both are errors as any other: {"error": "..."}. An operation
// that streams (a packet capture, should one be added) will need its own
// rule: the idle timeout counts the time between requests.
//
// Each operation has a request type (an Operation) and one row in the
// operation table (protocol.go). A state operation's request is an Edit:
// its Edit method is the operation, a change of the configuration, and the
// daemon runs every Edit with Handler.Change. The few other operations
// (queries, and flushing learned addresses) have a Handler method each.
// A Server decodes and validates requests and calls the Handler; Client.Do
// sends any Operation.
//
// One operation, capture, is a stream (stream.go): its reply line begins a
// stream of binary messages from the daemon (frames, then an end) that
// takes the connection for itself. The stream's format has its own
// version, StreamVersion, named in the request; its writes have their own
// stall rule (StreamStall) instead of the reply timeout.
//
// Listen creates the socket with mode 0600 (0660 and the group's ownership
// when a group is named), and a Server checks the credentials of every peer
// (SO_PEERCRED on Linux and OpenBSD, LOCAL_PEERCRED on FreeBSD) against an
// Authorizer before reading its requests.
package api
