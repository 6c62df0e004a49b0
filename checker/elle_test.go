package main

import (
	"strings"
	"testing"
)

func app(k, v string) Mop { return Mop{Append: true, Key: k, Value: v} }

func rd(k string, vs ...string) Mop {
	return Mop{Key: k, Read: append([]string{}, vs...), ReadKnown: true}
}

func ok(id int, mops ...Mop) Txn { return Txn{ID: id, Status: TxnOK, Mops: mops, Desc: "t"} }

// kinds lists the anomaly kinds found, in order.
func kinds(txns []Txn) string {
	var out []string
	for _, a := range CheckListAppend(txns) {
		out = append(out, a.Kind)
	}
	return strings.Join(out, ",")
}

func TestListAppendAnomalies(t *testing.T) {
	cases := []struct {
		name string
		txns []Txn
		want string
	}{
		{"serial history is clean", []Txn{
			ok(1, app("x", "1"), rd("x", "1")),
			ok(2, rd("x", "1"), app("x", "2"), app("y", "3")),
			ok(3, rd("x", "1", "2"), rd("y", "3")),
		}, ""},
		{"G0: write cycle", []Txn{
			ok(1, app("x", "1"), app("y", "1")),
			ok(2, app("x", "2"), app("y", "2")),
			ok(3, rd("x", "1", "2"), rd("y", "2", "1")),
		}, "G0"},
		{"G1a: aborted read", []Txn{
			{ID: 1, Status: TxnFail, Mops: []Mop{app("x", "1")}, Desc: "aborted"},
			ok(2, rd("x", "1")),
		}, "G1a"},
		{"G1b: intermediate read", []Txn{
			ok(1, app("x", "1"), app("x", "2")),
			ok(2, rd("x", "1")),
			ok(3, rd("x", "1", "2")),
		}, "G1b"},
		{"G1c: cyclic information flow", []Txn{
			ok(1, app("x", "1"), rd("y", "2")),
			ok(2, app("y", "2"), rd("x", "1")),
		}, "G1c"},
		{"G-single: one anti-dependency", []Txn{
			ok(1, rd("x"), rd("y", "2")),
			ok(2, app("x", "2"), app("y", "2")),
			ok(3, rd("x", "2")),
		}, "G-single"},
		{"G2: write skew", []Txn{
			ok(1, rd("x"), app("y", "1")),
			ok(2, rd("y"), app("x", "2")),
			ok(3, rd("x", "2"), rd("y", "1")),
		}, "G2"},
		{"incompatible order", []Txn{
			ok(1, app("x", "1")),
			ok(2, app("x", "2")),
			ok(3, rd("x", "1", "2")),
			ok(4, rd("x", "2")),
		}, "incompatible-order"},
		{"duplicate elements", []Txn{
			ok(1, app("x", "1")),
			ok(2, rd("x", "1", "1")),
		}, "duplicate-elements"},
		{"garbage read", []Txn{ok(1, rd("x", "9"))}, "garbage-read"},
		{"internal: own append not seen", []Txn{
			ok(1, app("x", "1"), rd("x")),
		}, "internal"},
		{"unknown transactions may have happened", []Txn{
			{ID: 1, Status: TxnInfo, Mops: []Mop{app("x", "1"), {Key: "y"}}, Desc: "lost"},
			ok(2, rd("x", "1")),
		}, ""},
	}
	for _, c := range cases {
		if got := kinds(c.txns); got != c.want {
			t.Errorf("%s: got %q, want %q (%v)", c.name, got, c.want, CheckListAppend(c.txns))
		}
	}
}

func TestCycleExplanationNamesEdges(t *testing.T) {
	found := CheckListAppend([]Txn{
		ok(1, rd("x"), app("y", "1")),
		ok(2, rd("y"), app("x", "2")),
		ok(3, rd("x", "2"), rd("y", "1")),
	})
	if len(found) != 1 || !strings.Contains(found[0].Detail, "rw x") || !strings.Contains(found[0].Detail, "rw y") {
		t.Fatalf("explanation: %v", found)
	}
}

func TestTarjanFindsEveryComponent(t *testing.T) {
	g := newGraph()
	g.add(1, 2, ww, "a")
	g.add(2, 1, ww, "a")
	g.add(3, 4, wr, "b")
	g.add(4, 5, wr, "b")
	g.add(5, 3, rw, "b")
	g.add(5, 6, ww, "c")
	sccs := g.sccs(ww | wr | rw)
	if len(sccs) != 2 || len(sccs[0])+len(sccs[1]) != 5 {
		t.Fatalf("components: %v", sccs)
	}
	if got := g.sccs(ww | wr); len(got) != 1 {
		t.Fatalf("without rw edges: %v", got)
	}
}
