package avsc

// MinWidth is the fewest bytes a binary value of n encodes to: nothing
// for null, the size of a fixed, the sum of a record's fields, and one
// byte for everything else (a number, a length, a union's branch index,
// an array's or map's block count). The datum scan and the Parquet
// decoder use it to tell arrays whose items may take no bytes, whose
// block counts then bound nothing. It is computed once, when the schema
// is read.
func (n *Node) MinWidth() int { return n.minWidth }

// setWidths computes MinWidth for every node reachable from root.
func setWidths(root *Node) {
	w := widths{done: map[*Node]bool{}, open: map[*Node]bool{}}
	w.visit(root, map[*Node]bool{})
}

type widths struct {
	done map[*Node]bool // nodes whose minWidth is set
	open map[*Node]bool // records whose width is being summed
}

// visit sets the width of n and of every node below it, once each.
func (w widths) visit(n *Node, seen map[*Node]bool) {
	if seen[n] {
		return
	}
	seen[n] = true
	w.width(n)
	for i := range n.Fields {
		w.visit(n.Fields[i].Type, seen)
	}
	for _, c := range append([]*Node{n.Items, n.Values}, n.Branches...) {
		if c != nil {
			w.visit(c, seen)
		}
	}
}

func (w widths) width(n *Node) int {
	if w.done[n] {
		return n.minWidth
	}
	switch n.Kind {
	case Null:
		n.minWidth = 0
	case Fixed:
		n.minWidth = n.Size
	case Record:
		if w.open[n] {
			return 1 // a record directly inside itself: no valid schema has one
		}
		w.open[n] = true
		sum := 0
		for i := range n.Fields {
			sum += w.width(n.Fields[i].Type)
		}
		delete(w.open, n)
		n.minWidth = sum
	default:
		n.minWidth = 1
	}
	w.done[n] = true
	return n.minWidth
}
