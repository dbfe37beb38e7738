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

// removeWhere removes every entry for which drop returns true, calling
// gone for each after it left the index.
func (x *fdbIndex) removeWhere(drop func(*fdbEntry) bool, gone func(*fdbEntry)) {
	x.root = treapFilter(x.root, drop, gone)
}

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

// treapInsert inserts e into the treap under root and returns its new
// root. It goes down, only reading, to where e's priority puts it (below
// every node whose priority is at least e's), then splits the subtree
// found there by e's key into e's two children: only the nodes on the
// split's path are written, an expected constant number of them.
func treapInsert(root, e *fdbEntry) *fdbEntry {
	link := &root
	for n := *link; n != nil && n.prio >= e.prio; n = *link {
		link = &n.child[side(n, e.key)]
	}
	l, r := &e.child[0], &e.child[1]
	for n := *link; n != nil; {
		if n.key < e.key {
			*l, l, n = n, &n.child[1], n.child[1]
		} else {
			*r, r, n = n, &n.child[0], n.child[0]
		}
	}
	*l, *r = nil, nil
	*link = e
	return root
}

// side is the child of n under which key belongs: 0 for a smaller key.
func side(n *fdbEntry, key uint64) int {
	if key > n.key {
		return 1
	}
	return 0
}

// treapDelete removes key's entry from the treap under root and returns
// its new root.
func treapDelete(root *fdbEntry, key uint64) *fdbEntry {
	link := &root
	for n := *link; n != nil; n = *link {
		if n.key == key {
			*link = treapMerge(n.child[0], n.child[1])
			n.child = [2]*fdbEntry{}
			break
		}
		link = &n.child[side(n, key)]
	}
	return root
}

// treapFilter removes from the treap under n every entry for which drop
// returns true, calling gone for each, and returns the subtree's new top.
// It visits each node once: a sweep that removes many entries costs
// O(n), where as many deletes would cost O(n log n).
func treapFilter(n *fdbEntry, drop func(*fdbEntry) bool, gone func(*fdbEntry)) *fdbEntry {
	if n == nil {
		return nil
	}
	l, r := treapFilter(n.child[0], drop, gone), treapFilter(n.child[1], drop, gone)
	if drop(n) {
		n.child = [2]*fdbEntry{}
		gone(n)
		return treapMerge(l, r)
	}
	n.child = [2]*fdbEntry{l, r}
	return n
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
