// The queue workload's checks.
//
// Porcupine checks the history against the keyspace model (model.go), in
// which a blocking pop never waits: it is one atomic step, placed at some
// instant between its call and its return. A pop that returns a value is
// placed where that value is the head (the tail for BRPOPLPUSH) of its key:
// for a client that blocked, the instant the push that woke it took
// effect. A pop that returns nil after its timeout is placed where every
// key it names is empty; since a blocked client finds its keys empty when
// it arrives, such an instant always exists in a correct server's history,
// and a nil that no such instant explains (every moment of the call, some
// value was certainly in one of its keys) is illegal. A pop without a reply
// (a kill -9 in flight) may or may not have taken the head.
//
// That model cannot see a blocked pop that sleeps through a push: its nil
// is placed at its start, before the push. The whole-history checks below
// see it, and name each violation in words rather than as a failed
// linearization:
//
//	popped-twice     one value returned by two pops (or found in two done
//	                 lists, or in a done list and returned by a BLPOP)
//	still-queued     a popped value still in its queue at the end
//	garbage-pop      a popped value nobody pushed (to that key)
//	lost             an acknowledged push's value that no acknowledged pop
//	                 returned, no done list holds and its queue does not
//	                 hold at the end, beyond what the pops with an unknown
//	                 outcome could have taken
//	fifo             b was pushed after a's push returned (always so for
//	                 one producer's values), yet a head pop took b before
//	                 a's head pop was sent, or took b while a stayed queued
//	illegal-nil      a nil pop while its keys were certainly never all
//	                 empty during the call
//	early-nil        a blocking pop's nil sooner than its timeout
//	missed-wakeup    a blocking pop's nil while a value was certainly in
//	                 one of its keys and the pop was certainly waiting
//
// "Certainly": a value is in its key from its push's return until the call
// of the pop that took it (or of the closing read that found it). A
// blocking pop that answered nil arrived at the server at a ≥ call, waited
// until its timer fired at D ≥ a + timeout - 1 ms (timeouts are kept in
// whole milliseconds) and D ≤ return, so it was waiting throughout
// [return - timeout + 1 ms, call + timeout - 1 ms]. While a client waits
// on a key, Redis serves it as soon as the key holds a value, so no value
// may be there in that window.
package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// timeoutSlack is how much sooner than its timeout a server may time a
// blocking pop out: timeouts are whole milliseconds.
const timeoutSlack = int64(time.Millisecond)

// queued is what the history says of one pushed (or popped) value.
type queued struct {
	item   string
	key    string // pushed to
	push   int    // index of the RPUSH that carried it, or -1
	pos    int    // its place in that RPUSH
	acked  bool
	takes  []take          // acknowledged pops that returned it
	done   map[string]bool // done lists it was seen in
	final  int             // its index in its key's closing read, or -1
	finalC int64           // that read's call
}

type take struct {
	op   int
	key  string
	head bool
	dst  string // the done list of a move, or ""
}

// nilPop is a pop that answered nil.
type nilPop struct {
	op      int
	keys    []string
	timeout int64 // 0 for LPOP
}

// effective says the value's push took effect, before its return.
func (v *queued) effective(h []porcupine.Operation) bool {
	return v.push >= 0 && h[v.push].Return != math.MaxInt64 &&
		(v.acked || len(v.takes) > 0 || len(v.done) > 0 || v.final >= 0)
}

// present is the interval in which the value was certainly in its key, or
// false when its removal is not known.
func (v *queued) present(h []porcupine.Operation) (from, to int64, ok bool) {
	if !v.effective(h) {
		return 0, 0, false
	}
	from = h[v.push].Return
	switch {
	case len(v.takes) > 0:
		to = h[v.takes[0].op].Call
	case v.final >= 0:
		to = v.finalC
	default:
		return 0, 0, false
	}
	return from, to, from < to
}

// blockTimeout is a blocking command's timeout in nanoseconds, or 0.
func blockTimeout(c []string) int64 {
	switch c[0] {
	case "BLPOP", "BLMOVE", "BRPOPLPUSH":
		seconds, _ := strconv.ParseFloat(c[len(c)-1], 64)
		return int64(seconds * float64(time.Second))
	}
	return 0
}

func producerOf(item string) string { return item[:strings.IndexByte(item+".", '.')] }

// CheckQueue runs the whole-history checks and sums the history up.
func CheckQueue(h []porcupine.Operation) ([]Anomaly, string) {
	values := map[string]*queued{}
	get := func(item string) *queued {
		v, ok := values[item]
		if !ok {
			v = &queued{item: item, push: -1, final: -1, done: map[string]bool{}}
			values[item] = v
		}
		return v
	}
	var anomalies []Anomaly
	add := func(kind, format string, args ...interface{}) {
		anomalies = append(anomalies, Anomaly{Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	unknownPops := map[string]int{}
	finalRead := map[string]bool{}
	var nils []nilPop
	var pushed, taken, waited, timeouts, longTimeouts, longPops, unknown int
	for i, op := range h {
		in, out := op.Input.(*Input), op.Output.(*Output)
		c := in.Cmds[0]
		reply := ""
		if !out.Unknown && len(out.Replies) == 1 {
			reply = out.Replies[0]
		}
		if out.Unknown {
			unknown++
		}
		if blockTimeout(c) >= int64(200*time.Millisecond) {
			longPops++
		}
		var got string
		var t take
		switch c[0] {
		case "RPUSH":
			for j, item := range c[2:] {
				v := get(item)
				v.key, v.push, v.pos, v.acked = c[1], i, j, strings.HasPrefix(reply, ":")
				pushed++
			}
			continue
		case "BLPOP":
			if out.Unknown {
				for _, k := range c[1 : len(c)-1] {
					unknownPops[k]++
				}
				continue
			}
			if reply == "nil" {
				nils = append(nils, nilPop{op: i, keys: c[1 : len(c)-1], timeout: blockTimeout(c)})
				continue
			}
			pair := decodeList(reply)
			if len(pair) != 2 {
				continue
			}
			t, got = take{op: i, key: pair[0], head: true}, pair[1]
		case "LPOP", "BLMOVE", "BRPOPLPUSH":
			if out.Unknown {
				unknownPops[c[1]]++
				continue
			}
			if reply == "nil" {
				nils = append(nils, nilPop{op: i, keys: c[1:2], timeout: blockTimeout(c)})
				continue
			}
			t = take{op: i, key: c[1], head: c[0] == "LPOP" || (c[0] == "BLMOVE" && c[3] == "LEFT")}
			if c[0] != "LPOP" {
				t.dst = c[2]
			}
			got = strings.TrimPrefix(reply, "$")
		case "LRANGE":
			if out.Unknown {
				continue
			}
			items := decodeList(reply)
			for j, item := range items {
				v := get(item)
				switch {
				case isDoneKey(c[1]):
					v.done[c[1]] = true
				case in.Final:
					v.final, v.finalC = j, op.Call
				}
			}
			if in.Final {
				finalRead[c[1]] = true
			}
			continue
		case "LREM":
			if reply == ":1" {
				get(c[3]).done[c[1]] = true
			}
			continue
		default:
			continue
		}
		v := get(got)
		v.takes = append(v.takes, t)
		taken++
		if blockTimeout(c) > 0 && op.Return-op.Call > 2*int64(time.Millisecond) {
			waited++
		}
	}

	items := make([]string, 0, len(values))
	for item := range values {
		items = append(items, item)
	}
	sort.Strings(items)
	byKey := map[string][]*queued{}
	missing := map[string][]*queued{}
	for _, item := range items {
		v := values[item]
		if v.push < 0 {
			for _, t := range v.takes {
				add("garbage-pop", "%s returned %s, which no RPUSH sent", opLine(h[t.op]), item)
			}
			continue
		}
		byKey[v.key] = append(byKey[v.key], v)
		for _, t := range v.takes {
			if t.key != v.key {
				add("garbage-pop", "%s returned %s from %s, but %s pushed it to %s", opLine(h[t.op]), item, t.key, opLine(h[v.push]), v.key)
			}
		}
		if len(v.takes) > 1 {
			add("popped-twice", "%s was returned by %s and by %s", item, opLine(h[v.takes[0].op]), opLine(h[v.takes[1].op]))
		}
		var lists []string
		for d := range v.done {
			lists = append(lists, d)
		}
		sort.Strings(lists)
		switch {
		case len(lists) > 1:
			add("popped-twice", "%s was found in done lists %s", item, strings.Join(lists, " and "))
		case len(v.takes) == 1 && len(lists) == 1 && v.takes[0].dst != lists[0]:
			add("popped-twice", "%s was returned by %s and found in done list %s", item, opLine(h[v.takes[0].op]), lists[0])
		}
		if v.final >= 0 && (len(v.takes) > 0 || len(lists) > 0) {
			how := "moved to " + strings.Join(lists, ", ")
			if len(v.takes) > 0 {
				how = "returned by " + opLine(h[v.takes[0].op])
			}
			add("still-queued", "%s was %s, yet the closing read finds it in %s", item, how, v.key)
		}
		if v.acked && len(v.takes) == 0 && len(lists) == 0 && v.final < 0 && finalRead[v.key] {
			missing[v.key] = append(missing[v.key], v)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if lost := missing[k]; len(lost) > unknownPops[k] {
			for _, v := range lost {
				add("lost", "%s pushed by %s (acknowledged): no acknowledged pop returned it, no done list holds it, and %s does not at the end (%d such values of %s, %d pops of it without a reply)",
					v.item, opLine(h[v.push]), k, len(lost), k, unknownPops[k])
			}
		}
		anomalies = append(anomalies, fifoOrder(h, k, byKey[k])...)
	}
	anomalies = append(anomalies, nilChecks(h, nils, byKey)...)

	for _, n := range nils {
		if n.timeout > 0 {
			timeouts++
			if n.timeout >= int64(200*time.Millisecond) {
				longTimeouts++
			}
		}
	}
	summary := fmt.Sprintf("%d values pushed, %d popped (%d by a blocking pop that waited over 2 ms), %d timeouts (%d of the %d pops that wait 0.2 s or more), %d operations without a reply",
		pushed, taken, waited, timeouts, longTimeouts, longPops, unknown)
	return anomalies, summary
}

// fifoOrder compares the values of one key pairwise: a before b when b's
// RPUSH was sent after a's returned, or both came in one RPUSH in that
// order.
func fifoOrder(h []porcupine.Operation, key string, values []*queued) []Anomaly {
	var out []Anomaly
	headTake := func(v *queued) (take, bool) {
		if len(v.takes) == 1 && v.takes[0].head && v.takes[0].key == key {
			return v.takes[0], true
		}
		return take{}, false
	}
	for _, a := range values {
		if !a.effective(h) {
			continue
		}
		aTake, aHead := headTake(a)
		for _, b := range values {
			before := (a.push == b.push && a.pos < b.pos) || h[a.push].Return < h[b.push].Call
			if !before {
				continue
			}
			bTake, bHead := headTake(b)
			why := ""
			switch {
			case aHead && bHead && h[bTake.op].Return < h[aTake.op].Call:
				why = fmt.Sprintf("%s took %s before %s took %s", opLine(h[bTake.op]), b.item, opLine(h[aTake.op]), a.item)
			case a.final >= 0 && bHead:
				why = fmt.Sprintf("%s took %s, yet %s is still in %s at the end", opLine(h[bTake.op]), b.item, a.item, key)
			case a.final >= 0 && b.final >= 0 && b.final < a.final:
				why = fmt.Sprintf("the closing read of %s has %s before %s", key, b.item, a.item)
			default:
				continue
			}
			who := "the same producer"
			if producerOf(a.item) != producerOf(b.item) {
				who = "producers " + producerOf(a.item) + " and " + producerOf(b.item)
			}
			out = append(out, Anomaly{Kind: "fifo", Detail: fmt.Sprintf("%s: %s was pushed before %s (%s; %s, then %s), but %s",
				key, a.item, b.item, who, opLine(h[a.push]), opLine(h[b.push]), why)})
		}
	}
	return out
}

type interval struct {
	from, to int64
	item     string
}

// nilChecks: illegal-nil, early-nil and missed-wakeup.
func nilChecks(h []porcupine.Operation, nils []nilPop, byKey map[string][]*queued) []Anomaly {
	var out []Anomaly
	presence := map[string][]interval{}
	for k, values := range byKey {
		for _, v := range values {
			if from, to, ok := v.present(h); ok {
				presence[k] = append(presence[k], interval{from, to, v.item})
			}
		}
	}
	for _, n := range nils {
		op := h[n.op]
		var spans []interval
		for _, k := range n.keys {
			for _, iv := range presence[k] {
				if iv.from < op.Return && iv.to > op.Call {
					spans = append(spans, interval{iv.from, iv.to, iv.item + " in " + k})
				}
			}
		}
		if covers(spans, op.Call, op.Return) {
			var names []string
			for i, s := range spans {
				if i == 4 {
					names = append(names, "...")
					break
				}
				names = append(names, fmt.Sprintf("%s (%.3f to %.3f ms)", s.item, float64(s.from)/1e6, float64(s.to)/1e6))
			}
			out = append(out, Anomaly{Kind: "illegal-nil", Detail: fmt.Sprintf("%s: its keys were never all empty during the call: %s",
				opLine(op), strings.Join(names, ", "))})
			continue
		}
		if n.timeout == 0 {
			continue
		}
		if op.Return-op.Call < n.timeout-timeoutSlack {
			out = append(out, Anomaly{Kind: "early-nil", Detail: fmt.Sprintf("%s: nil after %.3f ms, before its timeout",
				opLine(op), float64(op.Return-op.Call)/1e6)})
			continue
		}
		from, to := op.Return-n.timeout+timeoutSlack, op.Call+n.timeout-timeoutSlack
		for _, s := range spans {
			if s.from < to && s.to > from {
				out = append(out, Anomaly{Kind: "missed-wakeup", Detail: fmt.Sprintf("%s: waiting from %.3f ms or sooner to %.3f ms or later, it answered nil while %s from %.3f ms to %.3f ms at least",
					opLine(op), float64(from)/1e6, float64(to)/1e6, s.item, float64(s.from)/1e6, float64(s.to)/1e6)})
				break
			}
		}
	}
	return out
}

// covers says whether the intervals together cover [from, to].
func covers(spans []interval, from, to int64) bool {
	sorted := append([]interval(nil), spans...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].from < sorted[j].from })
	reach := from
	for _, s := range sorted {
		if s.from > reach {
			return false
		}
		if s.to > reach {
			reach = s.to
		}
		if reach >= to {
			return true
		}
	}
	return false
}
