package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/swctl/swctl/internal/api"
)

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "show every counter of the engine, as the metrics endpoint serves them",
		Flags: []cli.Flag{outputFlag()},
		Action: func(c *cli.Context) error {
			return showList(c, 0, 0, api.StatsRequest{}, formatStats)
		},
	}
}

// showList runs a command that prints a list: it checks -o, the number
// of arguments and req, asks the daemon, and prints the answer as JSON or
// with format.
func showList[T any](c *cli.Context, min, max int, req api.Operation, format func(io.Writer, []T) error) error {
	asJSON, err := jsonOutput(c)
	if err != nil {
		return err
	}
	if err := wantArgs(c, min, max); err != nil {
		return err
	}
	if err := validate(req); err != nil {
		return err
	}
	return do(c, func(ctx context.Context, cl *api.Client) error {
		var list []T
		if err := cl.Do(ctx, req, &list); err != nil {
			return err
		}
		if asJSON {
			return writeJSON(c.App.Writer, nonNil(list))
		}
		return format(c.App.Writer, list)
	})
}

// objectLabels are the labels that name the object a sample describes,
// in the order they are shown and grouped by.
var objectLabels = []string{"bridge", "trunk", "lb", "backend", "port", "owner", "role"}

// statsGroup is the section of swctl stats a metric belongs to: the word
// after "swctl_" (port, bridge, trunk, lb), "daemon" for the rest.
func statsGroup(name string) string {
	g, _, _ := strings.Cut(strings.TrimPrefix(name, "swctl_"), "_")
	switch g {
	case "port", "bridge", "trunk", "lb":
		return g
	}
	return "daemon"
}

// groupOrder is the order of the sections.
var groupOrder = map[string]int{"daemon": 0, "bridge": 1, "trunk": 2, "lb": 3, "port": 4}

// formatLabels writes labels as k=v words: the object's labels first, in
// objectLabels order, then the rest sorted.
func formatLabels(l map[string]string) string {
	var words []string
	for _, k := range objectLabels {
		if v, ok := l[k]; ok {
			words = append(words, k+"="+v)
		}
	}
	var rest []string
	for k, v := range l {
		if !slices.Contains(objectLabels, k) {
			rest = append(rest, k+"="+v)
		}
	}
	slices.Sort(rest)
	return strings.Join(append(words, rest...), " ")
}

// objectKey is the values of the sample's object labels, which keep an
// object's samples together and a bridge's or trunk's ports after one
// another, and an lb's backends after the lb.
func objectKey(l map[string]string) string {
	var b strings.Builder
	for _, k := range []string{"bridge", "trunk", "lb", "backend", "owner", "port", "role"} {
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// formatStats writes the samples as one table, in sections (daemon,
// bridges, trunks, lbs, ports) separated by a blank line; within a section
// each object's samples are together, by metric name, then labels.
func formatStats(w io.Writer, ss []api.Sample) error {
	type row struct {
		group, object, name, labels string
		value                       float64
	}
	rows := make([]row, len(ss))
	for i, s := range ss {
		rows[i] = row{statsGroup(s.Name), objectKey(s.Labels), s.Name, formatLabels(s.Labels), s.Value}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(groupOrder[a.group], groupOrder[b.group]), cmp.Compare(a.object, b.object),
			cmp.Compare(a.name, b.name), cmp.Compare(a.labels, b.labels))
	})
	// One alignment for the whole table, across the blank lines between
	// sections (a tabwriter aligns each run of lines apart).
	nameW, labelsW := len("NAME"), len("LABELS")
	for i := range rows {
		if rows[i].labels == "" {
			rows[i].labels = "-"
		}
		nameW, labelsW = max(nameW, len(rows[i].name)), max(labelsW, len(rows[i].labels))
	}
	fmt.Fprintf(w, "%-*s  %-*s  %s\n", nameW, "NAME", labelsW, "LABELS", "VALUE")
	for i, r := range rows {
		if i > 0 && r.group != rows[i-1].group {
			fmt.Fprintln(w)
		}
		if _, err := fmt.Fprintf(w, "%-*s  %-*s  %s\n", nameW, r.name, labelsW, r.labels, strconv.FormatFloat(r.value, 'f', -1, 64)); err != nil {
			return err
		}
	}
	return nil
}
