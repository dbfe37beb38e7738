// Package bsdimport translates the bridge and trunk configuration of
// OpenBSD and FreeBSD into swctl's configuration, for users who migrate
// (`swctl config import`).
//
// It reads two kinds of files:
//
//   - OpenBSD's hostname.if(5) files of bridge(4), veb(4), trunk(4) and
//     aggr(4) interfaces: each line is a list of ifconfig(8) words
//     ("add em0", "blocknonip em1", "-learn em1", "maxaddr 500",
//     "trunkproto lacp trunkport em1", "lacpmode active"); the interface
//     is named by the file ("hostname.bridge0");
//   - FreeBSD's rc.conf(5): cloned_interfaces, and the ifconfig words of
//     ifconfig_bridgeN ("addm em0 addm em1 stp em0 up") and
//     ifconfig_laggN ("laggproto lacp laggport em0 laggport em1"), with
//     create_args_IF and renames (ifconfig_IF_name). Several rc.conf
//     files (rc.conf, rc.conf.local) are read as sh would: in order, a
//     later assignment replacing an earlier one.
//
// The words are applied in order, as ifconfig would apply them, to a
// config.Config built with the config package, so that what Result
// returns is exactly what the daemon reads (config.Format writes it).
//
// Nothing is dropped silently: every word or line that has no swctl
// equivalent (the spanning tree, which swctl does not have yet, host
// addresses, descriptions, filter rules, unknown words) is returned as a
// Note naming the file, the line, the words and the reason. A bridge with
// a host address gets a local TAP, swctl's way of putting the host on the
// bridge, and a note saying the address itself must be set by the
// system's network configuration.
//
// Input is untrusted: lines are bounded (MaxLineLen), as are sh
// expansions, and every value is checked with the config package's
// checks before it is used.
package bsdimport
