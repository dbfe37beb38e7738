package bridge

import "math/rand/v2"

// The address table's order: each shard keeps its entries in a treap (a
// binary search tree balanced by random priorities) threaded through the
// entries themselves, so that bridge addr can list a page in (VLAN, MAC)
// order from any position without copying or sorting the table. Inserts
// and deletes cost O(log n) and happen only where the shard's map changes,
// with its mu held for writing; the forwarding path never walks it.
// Priorities are random, not a hash of the key: stations choose their MACs,
// and must not be able to choose a degenerate tree.

// fdbIndex is one shard's entries ordered by key. Guarded by the shard's
// mu, like the map.
type fdbIndex struct {
	// root is the top of the treap, nil when the shard is empty.
	root *fdbEntry
}

// insert adds e, whose key is not in the index yet.
func (x *fdbIndex) insert(e *fdbEntry) {
	e.prio = rand.Uint32()
	e.child = [2]*fdbEntry{}
	x.root = treapInsert(x.root, e)
}

// delete removes the entry for key, if there is one.
func (x *fdbIndex) delete(key uint64) { x.root = treapDelete(x.root, key) }

// fdbCursor walks an index in key order. The index must not change while
// a cursor is in use (the shard's mu held, for reading at least).
type fdbCursor struct {
	// stack holds the entries still to visit whose left subtrees are
	// done, the next one on top.
	stack []*fdbEntry
}

// seek places c before the entry with the smallest key greater than key
// in x, or at least key when from is set.
func (c *fdbCursor) seek(x *fdbIndex, key uint64, from bool) {
	c.stack = c.stack[:0]
	for n := x.root; n != nil; {
		if n.key > key || (from && n.key == key) {
			c.stack = append(c.stack, n)
			n = n.child[0]
		} else {
			n = n.child[1]
		}
	}
}

// next returns the next entry, or nil at the end.
func (c *fdbCursor) next() *fdbEntry {
	if len(c.stack) == 0 {
		return nil
	}
	e := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	for n := e.child[1]; n != nil; n = n.child[0] {
		c.stack = append(c.stack, n)
	}
	return e
}

// treapInsert inserts e under n and returns the subtree's new top: e goes
// down the side its key orders it to, and rotates up while its priority
// is the higher.
func treapInsert(n, e *fdbEntry) *fdbEntry {
	if n == nil {
		return e
	}
	side := 0
	if e.key > n.key {
		side = 1
	}
	n.child[side] = treapInsert(n.child[side], e)
	if c := n.child[side]; c.prio > n.prio {
		n.child[side], c.child[1-side] = c.child[1-side], n
		return c
	}
	return n
}

// treapDelete removes key's entry under n and returns the subtree's new
// top.
func treapDelete(n *fdbEntry, key uint64) *fdbEntry {
	switch {
	case n == nil:
		return nil
	case key < n.key:
		n.child[0] = treapDelete(n.child[0], key)
		return n
	case key > n.key:
		n.child[1] = treapDelete(n.child[1], key)
		return n
	}
	top := treapMerge(n.child[0], n.child[1])
	n.child = [2]*fdbEntry{}
	return top
}

// treapMerge joins two treaps whose keys are all smaller in a than in b.
func treapMerge(a, b *fdbEntry) *fdbEntry {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.child[1] = treapMerge(a.child[1], b)
		return a
	}
	b.child[0] = treapMerge(a, b.child[0])
	return b
}
