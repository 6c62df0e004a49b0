// A list-append anomaly checker after Elle (Kingsbury & Alvaro, "Elle:
// Inferring Isolation Anomalies from Experimental Observations", VLDB 2020).
// Elle itself is Clojure on Clojars, which this project cannot reach, and
// no maintained port is published on the Go proxy, PyPI, npm or Maven
// Central; this is the part of it the list-append workload needs.
//
// Transactions append unique values to lists and read whole lists. Because
// each value is unique and lists only grow, a read names the exact version
// it saw, and the longest read of a key gives that key's version order.
// From it come the dependency edges between transactions:
//
//	ww  T1 appended the value just before T2's in the version order
//	wr  T2 read a list whose last value T1 appended
//	rw  T1 read a list that T2's append (the next version) extended
//
// and the anomalies of Adya's hierarchy, each found as a cycle in the
// strongly connected components (Tarjan) of that graph:
//
//	G0        a cycle of ww edges only (write cycle)
//	G1c       a cycle of ww and wr edges (cyclic information flow)
//	G-single  a cycle with exactly one rw edge (G2 with one anti-dependency)
//	G2        a cycle with more rw edges
//
// plus the ones a single read shows: G1a (reads an aborted transaction's
// append), G1b (reads a list ending in an append that its transaction
// followed with another append to the same key), incompatible-order (a read
// that is not a prefix of the longest read), duplicate-elements,
// garbage-read (a value nobody appended) and internal (a read inside a
// transaction that disagrees with its own earlier reads and appends).
package main

import (
	"fmt"
	"sort"
	"strings"
)

// TxnStatus is what the client learned of a transaction's fate.
type TxnStatus int

const (
	TxnOK   TxnStatus = iota // committed, reads are known
	TxnFail                  // certainly had no effect (aborted EXEC, DISCARD)
	TxnInfo                  // unknown: its appends may have happened
)

// Mop is one micro-operation: an append of Value or a read of Key.
type Mop struct {
	Append    bool
	Key       string
	Value     string
	Read      []string
	ReadKnown bool
}

// Txn is one transaction of the history.
type Txn struct {
	ID     int
	Status TxnStatus
	Mops   []Mop
	Desc   string // how it was sent, for reports
}

// Anomaly is one finding.
type Anomaly struct {
	Kind   string
	Detail string
}

type edgeKind uint8

const (
	ww edgeKind = 1 << iota
	wr
	rw
)

func (k edgeKind) String() string {
	var parts []string
	for _, e := range []struct {
		bit  edgeKind
		name string
	}{{ww, "ww"}, {wr, "wr"}, {rw, "rw"}} {
		if k&e.bit != 0 {
			parts = append(parts, e.name)
		}
	}
	return strings.Join(parts, "+")
}

// graph is the dependency graph: edges[from][to] = kinds, with the key of
// the first edge of each kind for the explanation.
type graph struct {
	edges map[int]map[int]edgeKind
	why   map[[2]int]map[edgeKind]string
}

func newGraph() *graph {
	return &graph{edges: map[int]map[int]edgeKind{}, why: map[[2]int]map[edgeKind]string{}}
}

func (g *graph) add(from, to int, kind edgeKind, key string) {
	if from == to {
		return
	}
	if g.edges[from] == nil {
		g.edges[from] = map[int]edgeKind{}
	}
	g.edges[from][to] |= kind
	w := g.why[[2]int{from, to}]
	if w == nil {
		w = map[edgeKind]string{}
		g.why[[2]int{from, to}] = w
	}
	if _, ok := w[kind]; !ok {
		w[kind] = key
	}
}

// CheckListAppend returns every anomaly found in the history.
func CheckListAppend(txns []Txn) []Anomaly {
	var found []Anomaly
	add := func(kind, format string, args ...interface{}) {
		found = append(found, Anomaly{Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	byID := map[int]*Txn{}
	type origin struct {
		txn  int
		last bool // the transaction's last append to that key
	}
	writer := map[string]map[string]origin{} // key -> value -> origin
	for i := range txns {
		t := &txns[i]
		byID[t.ID] = t
		lastAppend := map[string]string{}
		for _, m := range t.Mops {
			if m.Append {
				lastAppend[m.Key] = m.Value
			}
		}
		for _, m := range t.Mops {
			if m.Append {
				if writer[m.Key] == nil {
					writer[m.Key] = map[string]origin{}
				}
				writer[m.Key][m.Value] = origin{txn: t.ID, last: lastAppend[m.Key] == m.Value}
			}
		}
	}

	// Checks of single reads, and the longest read of each key.
	longest := map[string][]string{}
	for i := range txns {
		t := &txns[i]
		if t.Status != TxnOK {
			continue
		}
		seen := map[string][]string{} // the txn's own view of each key so far
		known := map[string]bool{}
		for _, m := range t.Mops {
			if m.Append {
				seen[m.Key] = append(append([]string(nil), seen[m.Key]...), m.Value)
				continue
			}
			if !m.ReadKnown {
				known[m.Key] = false
				seen[m.Key] = nil
				continue
			}
			if dup := firstDuplicate(m.Read); dup != "" {
				add("duplicate-elements", "T%d read %s = %v: %q twice", t.ID, m.Key, short(m.Read), dup)
			}
			for _, v := range m.Read {
				o, ok := writer[m.Key][v]
				switch {
				case !ok:
					add("garbage-read", "T%d read %s = %v: nobody appended %q", t.ID, m.Key, short(m.Read), v)
				case byID[o.txn].Status == TxnFail:
					add("G1a", "T%d read %s = %v, which holds %q appended by aborted T%d (%s)", t.ID, m.Key, short(m.Read), v, o.txn, byID[o.txn].Desc)
				}
			}
			if n := len(m.Read); n > 0 {
				if o, ok := writer[m.Key][m.Read[n-1]]; ok && o.txn != t.ID && !o.last {
					add("G1b", "T%d read %s = %v, ending in %q, an intermediate append of T%d (%s)", t.ID, m.Key, short(m.Read), m.Read[n-1], o.txn, byID[o.txn].Desc)
				}
			}
			if own, ok := seen[m.Key]; ok && known[m.Key] {
				if !equalLists(own, m.Read) {
					add("internal", "T%d read %s = %v after its own reads and appends gave %v", t.ID, m.Key, short(m.Read), short(own))
				}
			} else if len(own) > 0 && !hasSuffix(m.Read, own) {
				add("internal", "T%d read %s = %v, which does not end with its own appends %v", t.ID, m.Key, short(m.Read), own)
			}
			seen[m.Key], known[m.Key] = m.Read, true
			if len(m.Read) > len(longest[m.Key]) {
				longest[m.Key] = m.Read
			}
		}
	}

	// Every read must be a prefix of the longest one; the ones that are not
	// are left out of the graph.
	consistent := func(key string, read []string) bool {
		l := longest[key]
		return len(read) <= len(l) && equalLists(read, l[:len(read)])
	}
	reported := map[string]bool{}
	for i := range txns {
		t := &txns[i]
		if t.Status != TxnOK {
			continue
		}
		for _, m := range t.Mops {
			if !m.Append && m.ReadKnown && !consistent(m.Key, m.Read) && !reported[m.Key] {
				reported[m.Key] = true
				add("incompatible-order", "T%d read %s = %v, not a prefix of T%d's longer read %v", t.ID, m.Key, short(m.Read), readerOf(txns, m.Key, longest[m.Key]), short(longest[m.Key]))
			}
		}
	}

	g := newGraph()
	for key, order := range longest {
		for i := 0; i+1 < len(order); i++ {
			a, okA := writer[key][order[i]]
			b, okB := writer[key][order[i+1]]
			if okA && okB {
				g.add(a.txn, b.txn, ww, key)
			}
		}
	}
	for i := range txns {
		t := &txns[i]
		if t.Status != TxnOK {
			continue
		}
		for _, m := range t.Mops {
			if m.Append || !m.ReadKnown || !consistent(m.Key, m.Read) {
				continue
			}
			order := longest[m.Key]
			if n := len(m.Read); n > 0 {
				if o, ok := writer[m.Key][m.Read[n-1]]; ok {
					g.add(o.txn, t.ID, wr, m.Key)
				}
			}
			// The next version is the first value past the read that
			// another transaction appended (a transaction's own later
			// appends belong to the version the read saw, or a G1b).
			n := len(m.Read)
			for n < len(order) && n > 0 && writer[m.Key][order[n]].txn == writer[m.Key][m.Read[len(m.Read)-1]].txn {
				n++
			}
			if n < len(order) {
				if o, ok := writer[m.Key][order[n]]; ok {
					g.add(t.ID, o.txn, rw, m.Key)
				}
			}
		}
	}
	for _, scc := range g.sccs(ww | wr | rw) {
		kind, cycle := g.classify(scc)
		add(kind, "%s", g.explain(cycle, byID))
	}
	return found
}

// sccs returns the strongly connected components of more than one node,
// following only edges of the given kinds (Tarjan, iterative).
func (g *graph) sccs(kinds edgeKind) [][]int {
	return g.sccsWithin(kinds, nil)
}

func (g *graph) sccsWithin(kinds edgeKind, within map[int]bool) [][]int {
	index := map[int]int{}
	low := map[int]int{}
	onStack := map[int]bool{}
	var stack []int
	var out [][]int
	next := 0
	nodes := make([]int, 0, len(g.edges))
	for n := range g.edges {
		if within == nil || within[n] {
			nodes = append(nodes, n)
		}
	}
	sort.Ints(nodes)
	succ := func(n int) []int {
		var s []int
		for m, k := range g.edges[n] {
			if k&kinds != 0 && (within == nil || within[m]) {
				s = append(s, m)
			}
		}
		sort.Ints(s)
		return s
	}
	type frame struct {
		node int
		succ []int
		i    int
	}
	for _, root := range nodes {
		if _, seen := index[root]; seen {
			continue
		}
		work := []frame{{node: root, succ: succ(root)}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			f := &work[len(work)-1]
			if f.i < len(f.succ) {
				m := f.succ[f.i]
				f.i++
				if _, seen := index[m]; !seen {
					index[m], low[m] = next, next
					next++
					stack = append(stack, m)
					onStack[m] = true
					work = append(work, frame{node: m, succ: succ(m)})
				} else if onStack[m] {
					low[f.node] = minInt(low[f.node], index[m])
				}
				continue
			}
			n := f.node
			work = work[:len(work)-1]
			if len(work) > 0 {
				parent := work[len(work)-1].node
				low[parent] = minInt(low[parent], low[n])
			}
			if low[n] == index[n] {
				var comp []int
				for {
					top := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[top] = false
					comp = append(comp, top)
					if top == n {
						break
					}
				}
				if len(comp) > 1 {
					sort.Ints(comp)
					out = append(out, comp)
				}
			}
		}
	}
	return out
}

// classify names the worst-explained cycle of a component: G0 if the ww
// edges alone close a cycle, else G1c with ww and wr, else G-single if one
// rw edge and dependency edges close one, else G2.
func (g *graph) classify(scc []int) (string, []int) {
	within := map[int]bool{}
	for _, n := range scc {
		within[n] = true
	}
	for _, c := range []struct {
		kinds edgeKind
		name  string
	}{{ww, "G0"}, {ww | wr, "G1c"}} {
		if sub := g.sccsWithin(c.kinds, within); len(sub) > 0 {
			return c.name, g.cycleThrough(sub[0][0], c.kinds, within)
		}
	}
	// G-single: an rw edge a->b with a dependency path back from b to a.
	for _, a := range scc {
		for b, k := range g.edges[a] {
			if k&rw == 0 || !within[b] {
				continue
			}
			if path := g.path(b, a, ww|wr, within); path != nil {
				return "G-single", append([]int{a}, path[:len(path)-1]...)
			}
		}
	}
	return "G2", g.cycleThrough(scc[0], ww|wr|rw, within)
}

// cycleThrough is a shortest cycle from n back to n.
func (g *graph) cycleThrough(n int, kinds edgeKind, within map[int]bool) []int {
	for m, k := range g.edges[n] {
		if k&kinds != 0 && within[m] {
			if p := g.path(m, n, kinds, within); p != nil {
				return append([]int{n}, p[:len(p)-1]...)
			}
		}
	}
	return []int{n}
}

// path is a shortest path from a to b (both included), by BFS.
func (g *graph) path(a, b int, kinds edgeKind, within map[int]bool) []int {
	prev := map[int]int{a: a}
	queue := []int{a}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == b {
			var p []int
			for ; n != a; n = prev[n] {
				p = append(p, n)
			}
			p = append(p, a)
			for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
				p[i], p[j] = p[j], p[i]
			}
			return p
		}
		succs := make([]int, 0, len(g.edges[n]))
		for m, k := range g.edges[n] {
			if _, seen := prev[m]; !seen && k&kinds != 0 && within[m] {
				succs = append(succs, m)
			}
		}
		sort.Ints(succs)
		for _, m := range succs {
			prev[m] = n
			queue = append(queue, m)
		}
	}
	return nil
}

// explain writes a cycle as "T1 (desc) -ww x-> T2 (desc) -rw y-> T1".
func (g *graph) explain(cycle []int, byID map[int]*Txn) string {
	var b strings.Builder
	for i, n := range cycle {
		m := cycle[(i+1)%len(cycle)]
		fmt.Fprintf(&b, "T%d %s -", n, byID[n].Desc)
		k := g.edges[n][m]
		var labels []string
		for _, kind := range []edgeKind{ww, wr, rw} {
			if k&kind != 0 {
				labels = append(labels, kind.String()+" "+g.why[[2]int{n, m}][kind])
			}
		}
		fmt.Fprintf(&b, "%s-> ", strings.Join(labels, ","))
	}
	fmt.Fprintf(&b, "T%d", cycle[0])
	return b.String()
}

func firstDuplicate(list []string) string {
	seen := map[string]bool{}
	for _, v := range list {
		if seen[v] {
			return v
		}
		seen[v] = true
	}
	return ""
}

func equalLists(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasSuffix(list, suffix []string) bool {
	return len(suffix) <= len(list) && equalLists(list[len(list)-len(suffix):], suffix)
}

func readerOf(txns []Txn, key string, read []string) int {
	for _, t := range txns {
		for _, m := range t.Mops {
			if !m.Append && m.Key == key && m.ReadKnown && equalLists(m.Read, read) {
				return t.ID
			}
		}
	}
	return -1
}

// short abbreviates a long list for messages.
func short(list []string) string {
	if len(list) <= 12 {
		return "[" + strings.Join(list, " ") + "]"
	}
	return fmt.Sprintf("[%s ... %s] (%d values)", strings.Join(list[:4], " "), strings.Join(list[len(list)-6:], " "), len(list))
}

// minInt and maxInt keep the code free of Go 1.21's built-ins.
func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
