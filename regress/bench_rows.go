package regress

import "github.com/swctl/swctl/internal/benchtable"

// allRows returns every row ID in table order.
func allRows() []string {
	var ids []string
	for _, r := range benchtable.Rows() {
		ids = append(ids, r.ID)
	}
	return ids
}
