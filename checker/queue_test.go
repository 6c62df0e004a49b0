package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// at is an operation of the queue workload, its times in milliseconds;
// reply "?" is an operation without a reply.
func at(client int, call, ret float64, reply string, args ...string) porcupine.Operation {
	in := &Input{Kind: "cmd", Cmds: [][]string{args}, Keys: commandKeys(args)}
	out := &Output{Replies: []string{reply}}
	if reply == "?" {
		out = &Output{Unknown: true}
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: int64(call * 1e6), Output: out, Return: int64(ret * 1e6)}
}

// closing is the closing read of key.
func closing(call float64, key string, items ...string) porcupine.Operation {
	op := at(99, call, call+1, encodeList(items), "LRANGE", key, "0", "-1")
	op.Input.(*Input).Final = true
	return op
}

// verdict is Porcupine's answer and the kinds the whole-history checks
// found, sorted and without repeats.
func verdict(h []porcupine.Operation) (bool, string) {
	linearizable := porcupine.CheckOperations(newComponentModel(), h)
	anomalies, _ := CheckQueue(h)
	seen := map[string]bool{}
	var found []string
	for _, a := range anomalies {
		if !seen[a.Kind] {
			seen[a.Kind] = true
			found = append(found, a.Kind)
		}
	}
	sort.Strings(found)
	return linearizable, strings.Join(found, ",")
}

func TestModelQueueCommands(t *testing.T) {
	got := replies(t,
		[]string{"RPUSH", "q", "a", "b", "c"},
		[]string{"BLMOVE", "q", "d", "LEFT", "RIGHT", "0.1"},
		[]string{"BRPOPLPUSH", "q", "d", "0.1"},
		[]string{"LRANGE", "d", "0", "-1"},
		[]string{"LREM", "d", "1", "a"},
		[]string{"LREM", "d", "1", "a"},
		[]string{"LMOVE", "q", "q", "LEFT", "RIGHT"},
		[]string{"BLMOVE", "none", "d", "LEFT", "RIGHT", "0.1"},
		[]string{"BRPOPLPUSH", "q", "d", "0.1"},
		[]string{"BRPOPLPUSH", "q", "d", "0.1"},
		[]string{"RPUSH", "r", "x", "y", "x", "x"},
		[]string{"LREM", "r", "-2", "x"},
		[]string{"LRANGE", "r", "0", "-1"},
		[]string{"LREM", "d", "0", "b"},
		[]string{"TYPE", "d"},
	)
	want := []string{":3", "$a", "$c", "[$c,$a]", ":1", ":0", "$b", "nil", "$b", "nil",
		":4", ":2", "[$x,$y]", ":1", "$list"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestPartitionByComponent(t *testing.T) {
	h := []porcupine.Operation{
		at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
		at(1, 0, 1, ":1", "RPUSH", "q1.0", "p1.1"),
		at(2, 0, 1, "nil", "BLPOP", "q0.1", "q0.0", "0.01"),
		at(3, 0, 1, "nil", "BLMOVE", "q0.1", "q0.done.c3", "LEFT", "RIGHT", "0.01"),
		at(4, 0, 1, ":0", "LREM", "q1.done.c4", "1", "p1.1"),
	}
	parts := partitionByComponent(h)
	if len(parts) != 3 || len(parts[0]) != 3 || len(parts[1]) != 1 || len(parts[2]) != 1 {
		t.Fatalf("partitions: %v", parts)
	}
}

// A history a correct server gives: a pop blocked before the push that
// woke it, a move acknowledged with LREM, a timeout on empty keys, and a
// pop without a reply that may have moved the last value or not.
func goodQueueHistory(lastInDone bool) []porcupine.Operation {
	h := []porcupine.Operation{
		at(1, 0, 3, "[$q0.0,$p0.1]", "BLPOP", "q0.0", "0.5"),
		at(0, 1, 2, ":2", "RPUSH", "q0.0", "p0.1", "p0.2"),
		at(2, 4, 5, "$p0.2", "BLMOVE", "q0.0", "q0.done.c2", "LEFT", "RIGHT", "0.2"),
		at(2, 6, 7, ":1", "LREM", "q0.done.c2", "1", "p0.2"),
		at(3, 10, 62, "nil", "BLPOP", "q0.0", "q0.1", "0.05"),
		at(3, 62, 63, "nil", "LPOP", "q0.0"),
		at(0, 70, 71, ":1", "RPUSH", "q0.0", "p0.3"),
		at(4, 72, 80, "?", "BRPOPLPUSH", "q0.0", "q0.done.c4", "0.1"),
		closing(100, "q0.1"),
		closing(100, "q0.done.c2"),
	}
	if lastInDone {
		return append(h, closing(100, "q0.0"), closing(100, "q0.done.c4", "p0.3"))
	}
	return append(h, closing(100, "q0.0", "p0.3"), closing(100, "q0.done.c4"))
}

func TestQueueHistoryPasses(t *testing.T) {
	for _, lastInDone := range []bool{false, true} {
		if ok, found := verdict(goodQueueHistory(lastInDone)); !ok || found != "" {
			t.Errorf("a correct history (last value in done: %v): linearizable %v, found %q", lastInDone, ok, found)
		}
	}
}

func TestQueueHistoriesThatMustFail(t *testing.T) {
	cases := []struct {
		name string
		h    []porcupine.Operation
		want string // the whole-history checks' kinds
	}{
		{"a value popped twice", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(1, 2, 3, "[$q0.0,$p0.1]", "BLPOP", "q0.0", "0.1"),
			at(2, 4, 5, "$p0.1", "LPOP", "q0.0"),
			closing(10, "q0.0"),
		}, "popped-twice"},
		{"a value moved into two done lists", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(1, 2, 3, "$p0.1", "BLMOVE", "q0.0", "q0.done.c1", "LEFT", "RIGHT", "0.1"),
			at(2, 2, 9, "?", "BRPOPLPUSH", "q0.0", "q0.done.c2", "0.1"),
			closing(10, "q0.0"),
			closing(10, "q0.done.c1", "p0.1"),
			closing(10, "q0.done.c2", "p0.1"),
		}, "popped-twice"},
		{"the second value popped while the first was still there", []porcupine.Operation{
			at(0, 0, 1, ":2", "RPUSH", "q0.0", "p0.1", "p0.2"),
			at(1, 2, 3, "$p0.2", "LPOP", "q0.0"),
			at(2, 4, 5, "[$q0.0,$p0.1]", "BLPOP", "q0.0", "0.1"),
			closing(10, "q0.0"),
		}, "fifo"},
		{"another producer's later value taken first", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(5, 2, 3, ":2", "RPUSH", "q0.0", "p5.1"),
			at(1, 4, 5, "$p5.1", "BLMOVE", "q0.0", "q0.done.c1", "LEFT", "RIGHT", "0.1"),
			closing(10, "q0.0", "p0.1"),
			closing(10, "q0.done.c1", "p5.1"),
		}, "fifo"},
		{"a lost acknowledged push", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(0, 2, 3, ":2", "RPUSH", "q0.0", "p0.2"),
			at(1, 4, 5, "$p0.1", "LPOP", "q0.0"),
			closing(10, "q0.0"),
		}, "lost"},
		{"a lost push that one pop without a reply cannot explain", []porcupine.Operation{
			at(0, 0, 1, ":2", "RPUSH", "q0.0", "p0.1", "p0.2"),
			at(1, 4, 9, "?", "BLPOP", "q0.0", "0.1"),
			closing(10, "q0.0"),
		}, "lost"},
		{"an illegal nil: the key held a value throughout", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(1, 2, 53, "nil", "BLPOP", "q0.1", "q0.0", "0.05"),
			closing(60, "q0.0", "p0.1"),
			closing(60, "q0.1"),
		}, "illegal-nil"},
		{"an illegal nil of LPOP between two values", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(0, 2, 3, ":2", "RPUSH", "q0.0", "p0.2"),
			at(1, 4, 5, "$p0.1", "LPOP", "q0.0"),
			at(2, 2, 6, "nil", "LPOP", "q0.0"),
			closing(10, "q0.0", "p0.2"),
		}, "illegal-nil"},
		{"a popped value still queued at the end", []porcupine.Operation{
			at(0, 0, 1, ":1", "RPUSH", "q0.0", "p0.1"),
			at(1, 2, 3, "$p0.1", "BRPOPLPUSH", "q0.0", "q0.done.c1", "0.1"),
			closing(10, "q0.0", "p0.1"),
			closing(10, "q0.done.c1", "p0.1"),
		}, "still-queued"},
		{"a value nobody pushed", []porcupine.Operation{
			at(1, 2, 3, "$p7.7", "LPOP", "q0.0"),
			closing(10, "q0.0"),
		}, "garbage-pop"},
	}
	for _, c := range cases {
		ok, found := verdict(c.h)
		if ok {
			t.Errorf("%s: Porcupine accepted it", c.name)
		}
		if found != c.want {
			t.Errorf("%s: the history checks found %q, want %q", c.name, found, c.want)
		}
	}
}

// The model places a timed-out pop at any instant of its call, so these
// pass Porcupine: only the whole-history checks, which know a blocked
// client is served as soon as its key holds a value and waits for its
// timeout, reject them.
func TestQueueHistoriesOnlyTheHistoryChecksReject(t *testing.T) {
	cases := []struct {
		name string
		h    []porcupine.Operation
		want string
	}{
		{"a blocked pop that slept through a push", []porcupine.Operation{
			at(1, 0, 201, "nil", "BLPOP", "q0.0", "0.2"),
			at(0, 10, 11, ":1", "RPUSH", "q0.0", "p0.1"),
			at(2, 150, 151, "$p0.1", "LPOP", "q0.0"),
			closing(300, "q0.0"),
		}, "missed-wakeup"},
		{"a nil before the timeout", []porcupine.Operation{
			at(1, 0, 5, "nil", "BLMOVE", "q0.0", "q0.done.c1", "LEFT", "RIGHT", "0.2"),
			closing(10, "q0.0"),
			closing(10, "q0.done.c1"),
		}, "early-nil"},
	}
	for _, c := range cases {
		ok, found := verdict(c.h)
		if !ok {
			t.Errorf("%s: Porcupine rejected it (the model should allow it)", c.name)
		}
		if found != c.want {
			t.Errorf("%s: the history checks found %q, want %q", c.name, found, c.want)
		}
	}
	// The same pop is fine when the value came after its timeout or was
	// taken by a pop that had waited before it.
	fine := []porcupine.Operation{
		at(1, 0, 201, "nil", "BLPOP", "q0.0", "0.2"),
		at(3, 5, 12, "[$q0.0,$p0.1]", "BLPOP", "q0.0", "1"),
		at(0, 10, 11, ":1", "RPUSH", "q0.0", "p0.1"),
		at(0, 199.5, 200, ":1", "RPUSH", "q0.0", "p0.2"),
		at(2, 250, 251, "$p0.2", "LPOP", "q0.0"),
		closing(300, "q0.0"),
	}
	if ok, found := verdict(fine); !ok || found != "" {
		t.Errorf("a timeout that raced a push: linearizable %v, found %q", ok, found)
	}
}
