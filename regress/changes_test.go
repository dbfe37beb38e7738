package regress

import (
	"errors"
	"strings"
	"testing"
)

// undoTo puts back the changes after the mark newest first, goes on after
// an error and returns them all, and keeps the changes before the mark.
func TestChangesUndoToNewestFirst(t *testing.T) {
	var order []string
	var c changes
	for _, name := range []string{"a", "b", "c", "d"} {
		c = append(c, func() error {
			order = append(order, name)
			if name == "c" || name == "d" {
				return errors.New(name + " failed")
			}
			return nil
		})
	}
	err := c.undoTo(1)
	if got := strings.Join(order, " "); got != "d c b" {
		t.Errorf("undoTo(1) ran %q, want %q", got, "d c b")
	}
	if err == nil || !strings.Contains(err.Error(), "c failed") || !strings.Contains(err.Error(), "d failed") {
		t.Errorf("undoTo(1): error %v, want both failures", err)
	}
	if len(c) != 1 {
		t.Fatalf("%d changes left, want 1", len(c))
	}
	if err := c.undoTo(0); err != nil || strings.Join(order, " ") != "d c b a" || len(c) != 0 {
		t.Errorf("undoTo(0): %v, ran %q, %d left; want nil, %q, 0", err, strings.Join(order, " "), len(c), "d c b a")
	}
}
