package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// replies runs commands one after another on a fresh keyspace.
func replies(t *testing.T, cmds ...[]string) []string {
	t.Helper()
	_, out := apply(emptyKeyspace(), &Input{Kind: "multi", Cmds: cmds})
	return out
}

func TestModelCommands(t *testing.T) {
	got := replies(t,
		[]string{"SET", "a", "5"}, []string{"INCR", "a"}, []string{"GET", "a"},
		[]string{"RPUSH", "l", "1"}, []string{"LPUSH", "l", "0"}, []string{"LRANGE", "l", "0", "-1"},
		[]string{"INCR", "l"}, []string{"GET", "l"}, []string{"SET", "s", "x1"}, []string{"INCR", "s"},
		[]string{"RPOP", "l"}, []string{"LPOP", "l"}, []string{"LPOP", "l"}, []string{"TYPE", "l"},
		[]string{"DEL", "a", "s", "l"}, []string{"BLPOP", "l", "0.1"},
	)
	want := []string{"$OK", ":6", "$6", ":1", ":2", "[$0,$1]", "!WRONGTYPE", "!WRONGTYPE",
		"$OK", "!NOTINT", "$1", "$0", "nil", "$none", ":2", "nil"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestModelFlushAndSwapInsideOneTransaction(t *testing.T) {
	got := replies(t,
		[]string{"SET", "a", "1"}, []string{"SWAPDB", "0", "1"}, []string{"GET", "a"},
		[]string{"SET", "a", "2"}, []string{"FLUSHDB"}, []string{"GET", "a"},
		[]string{"SWAPDB", "0", "1"}, []string{"GET", "a"}, []string{"SELECT", "1"}, []string{"GET", "a"},
	)
	want := []string{"$OK", "$OK", "nil", "$OK", "$OK", "nil", "$OK", "$1", "$OK", "nil"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestModelScripts(t *testing.T) {
	got := replies(t,
		[]string{"EVAL", "incr_push", "2", "n", "l"},
		[]string{"EVAL", "move", "2", "l", "m"},
		[]string{"EVAL", "read_all", "3", "n", "m", "z"},
		[]string{"EVAL", "flush_then", "2", "n", "l", "v"},
		[]string{"EVAL", "swap_then", "1", "l", "7"},
		[]string{"EVAL", "incr_push", "2", "l", "l"},
	)
	want := []string{"[:1,:1]", "$1", "[$s:1,$l:1,$none]", "[:0,:1]", "[$none,$7]", "!WRONGTYPE"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func op(client int, call, ret int64, in *Input, out *Output) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func cmd(args ...string) *Input { return &Input{Kind: "cmd", Cmds: [][]string{args}, Keys: args[1:2]} }

func reply(r string) *Output { return &Output{Replies: []string{r}} }

func TestPorcupineAcceptsAndRejects(t *testing.T) {
	good := []porcupine.Operation{
		op(0, 0, 10, cmd("SET", "a", "1"), reply("$OK")),
		op(1, 5, 15, cmd("GET", "a"), reply("nil")), // concurrent: may come first
		op(1, 20, 30, cmd("GET", "a"), reply("$1")),
	}
	if porcupine.CheckOperations(newModel(true), good) != true {
		t.Fatal("a linearizable history was rejected")
	}
	stale := append(good[:2:2], op(1, 20, 30, cmd("GET", "a"), reply("nil")))
	if porcupine.CheckOperations(newModel(true), stale) {
		t.Fatal("a stale read after the write returned was accepted")
	}
}

func TestUnknownOutcomeMayOrMayNotHappen(t *testing.T) {
	lost := &Output{Unknown: true}
	for _, seen := range []string{"nil", ":1"} {
		h := []porcupine.Operation{
			op(0, 0, 10, cmd("INCR", "a"), lost),
			op(1, 20, 30, cmd("GET", "a"), reply(map[string]string{"nil": "nil", ":1": "$1"}[seen])),
		}
		if !porcupine.CheckOperations(newModel(true), h) {
			t.Fatalf("unknown INCR then GET %s rejected", seen)
		}
	}
	twice := []porcupine.Operation{
		op(0, 0, 10, cmd("INCR", "a"), lost),
		op(1, 20, 30, cmd("GET", "a"), reply("$2")),
	}
	if porcupine.CheckOperations(newModel(true), twice) {
		t.Fatal("an unknown INCR was allowed to apply twice")
	}
}

func TestFlushInsideMultiMustHideEarlierWrites(t *testing.T) {
	in := &Input{Kind: "multi", Wide: true, Cmds: [][]string{{"SET", "a", "1"}, {"FLUSHDB"}, {"GET", "a"}}}
	// The reply a server gives when the read inside the transaction still
	// sees pre-flush data.
	bad := []porcupine.Operation{op(0, 0, 10, in, &Output{Replies: []string{"$OK", "$OK", "$1"}})}
	if porcupine.CheckOperations(newModel(false), bad) {
		t.Fatal("a read of pre-FLUSHDB data inside MULTI was accepted")
	}
}

func TestWatchedTransactionNeedsItsReadToHold(t *testing.T) {
	watch := &Input{Kind: "watch", Watch: []string{"a"}, Seen: []string{"nil"}, Cmds: [][]string{{"SET", "a", "9"}}, Keys: []string{"a"}}
	h := []porcupine.Operation{
		op(0, 0, 10, cmd("SET", "a", "1"), reply("$OK")),
		op(1, 20, 30, watch, reply("$OK")),
	}
	if porcupine.CheckOperations(newModel(true), h) {
		t.Fatal("EXEC committed although the watched key changed before WATCH's read")
	}
	h[1].Output = &Output{Aborted: true}
	if !porcupine.CheckOperations(newModel(true), h) {
		t.Fatal("an aborted EXEC must be allowed")
	}
}

func TestBlockedPopMayBeServedPastAString(t *testing.T) {
	ks := emptyKeyspace()
	ks, _ = apply(ks, &Input{Cmds: [][]string{{"SET", "s", "1"}, {"RPUSH", "l", "x"}}})
	if len(blpopStep(ks, []string{"BLPOP", "s", "l", "0.1"}, "[$l,$x]")) != 1 {
		t.Fatal("a served blocked pop was rejected")
	}
	if len(blpopStep(ks, []string{"BLPOP", "l", "0.1"}, "nil")) != 0 {
		t.Fatal("a timeout with a non-empty list was accepted")
	}
}
