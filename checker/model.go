// The sequential model the linearizability check compares Firn with: a
// whole small keyspace (strings and lists in databases 0 and 1) and the
// commands the workload sends, each returning its reply in the encoded form
// of reply.go ("$bulk", ":int", "nil", "[a,b]", "!WRONGTYPE", ...).
//
// A Keyspace is never mutated once built: Step clones it, applies a whole
// operation (one command, a MULTI/EXEC block or a script) and returns the
// clone. Its canonical text is computed once, so Porcupine's memo table
// compares and hashes states cheaply.
package main

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// value is one key's value: a string or a non-empty list.
type value struct {
	isList bool
	str    string
	list   []string // never mutated in place: every change builds a new slice
}

// Keyspace is databases 0 and 1.
type Keyspace struct {
	db    [2]map[string]value
	canon string
	hash  uint64
}

func emptyKeyspace() *Keyspace {
	ks := &Keyspace{db: [2]map[string]value{{}, {}}}
	ks.finish()
	return ks
}

func (ks *Keyspace) clone() *Keyspace {
	out := &Keyspace{}
	for i := range ks.db {
		out.db[i] = make(map[string]value, len(ks.db[i]))
		for k, v := range ks.db[i] {
			out.db[i][k] = v
		}
	}
	return out
}

// finish computes the canonical text after the last change.
func (ks *Keyspace) finish() {
	var b strings.Builder
	for i := range ks.db {
		keys := make([]string, 0, len(ks.db[i]))
		for k := range ks.db[i] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("db")
		b.WriteByte(byte('0' + i))
		b.WriteByte('{')
		for _, k := range keys {
			v := ks.db[i][k]
			b.WriteString(k)
			if v.isList {
				b.WriteString("=[")
				b.WriteString(strings.Join(v.list, ","))
				b.WriteString("] ")
			} else {
				b.WriteString("=")
				b.WriteString(strconv.Quote(v.str))
				b.WriteByte(' ')
			}
		}
		b.WriteString("} ")
	}
	ks.canon = strings.TrimSpace(b.String())
	h := fnv.New64a()
	h.Write([]byte(ks.canon))
	ks.hash = h.Sum64()
}

func (ks *Keyspace) String() string { return ks.canon }

// Input is one operation as the workload sent it.
type Input struct {
	Kind  string     // "cmd", "multi", "watch", "eval", "snapshot"
	Cmds  [][]string // the commands, run atomically in this order
	Watch []string   // WATCHed keys (db 0) of a "watch" operation
	Seen  []string   // GET replies of the watched keys, read after WATCH
	Keys  []string   // every key named, for partitioning
	Wide  bool       // names several keys or acts on whole databases
	Final bool       // the queue workload's read after every client stopped
}

// Output is what came back.
type Output struct {
	Replies []string // one per command (EXEC's array, or the single reply)
	Unknown bool     // no reply: the operation may or may not have happened
	Aborted bool     // EXEC answered nil: a WATCHed key changed
	Note    string   // the unexpected error that made the outcome unknown
}

// runCommand runs one command on ks (a private clone) in database *db.
func runCommand(ks *Keyspace, db *int, args []string) string {
	name := strings.ToUpper(args[0])
	d := ks.db[*db]
	switch name {
	case "GET":
		v, ok := d[args[1]]
		switch {
		case !ok:
			return "nil"
		case v.isList:
			return "!WRONGTYPE"
		}
		return "$" + v.str
	case "SET":
		d[args[1]] = value{str: args[2]}
		return "$OK"
	case "INCR":
		v, ok := d[args[1]]
		if ok && v.isList {
			return "!WRONGTYPE"
		}
		n := int64(0)
		if ok {
			parsed, err := strconv.ParseInt(v.str, 10, 64)
			if err != nil || strconv.FormatInt(parsed, 10) != v.str {
				return "!NOTINT"
			}
			n = parsed
		}
		n++
		d[args[1]] = value{str: strconv.FormatInt(n, 10)}
		return ":" + strconv.FormatInt(n, 10)
	case "DEL", "EXISTS":
		count := 0
		for _, k := range args[1:] {
			if _, ok := d[k]; ok {
				count++
				if name == "DEL" {
					delete(d, k)
				}
			}
		}
		return ":" + strconv.Itoa(count)
	case "LPUSH", "RPUSH":
		v, ok := d[args[1]]
		if ok && !v.isList {
			return "!WRONGTYPE"
		}
		list := make([]string, 0, len(v.list)+len(args)-2)
		if name == "LPUSH" {
			for i := len(args) - 1; i >= 2; i-- {
				list = append(list, args[i])
			}
			list = append(list, v.list...)
		} else {
			list = append(append(list, v.list...), args[2:]...)
		}
		d[args[1]] = value{isList: true, list: list}
		return ":" + strconv.Itoa(len(list))
	case "LPOP", "RPOP":
		return pop(d, args[1], name == "LPOP")
	case "LMOVE", "BLMOVE":
		// Like BLPOP, the model's BLMOVE never waits (see blpopStep).
		return move(d, args[1], args[2], args[3] == "LEFT", args[4] == "LEFT")
	case "RPOPLPUSH", "BRPOPLPUSH":
		return move(d, args[1], args[2], false, true)
	case "LREM":
		count, _ := strconv.Atoi(args[2])
		return lrem(d, args[1], count, args[3])
	case "BLPOP":
		// The model's BLPOP never waits: a nil reply (timeout) means every
		// list was empty at some instant of the call, which is where the
		// checker may place it.
		for _, k := range args[1 : len(args)-1] {
			v, ok := d[k]
			if ok && !v.isList {
				return "!WRONGTYPE"
			}
			if ok {
				return "[$" + k + "," + pop(d, k, true) + "]"
			}
		}
		return "nil"
	case "LLEN":
		v, ok := d[args[1]]
		if ok && !v.isList {
			return "!WRONGTYPE"
		}
		return ":" + strconv.Itoa(len(v.list))
	case "LRANGE":
		v, ok := d[args[1]]
		if ok && !v.isList {
			return "!WRONGTYPE"
		}
		start, _ := strconv.Atoi(args[2])
		stop, _ := strconv.Atoi(args[3])
		return encodeList(lrange(v.list, start, stop))
	case "TYPE":
		v, ok := d[args[1]]
		switch {
		case !ok:
			return "$none"
		case v.isList:
			return "$list"
		}
		return "$string"
	case "FLUSHDB":
		ks.db[*db] = map[string]value{}
		return "$OK"
	case "SWAPDB":
		ks.db[0], ks.db[1] = ks.db[1], ks.db[0]
		return "$OK"
	case "SELECT":
		*db, _ = strconv.Atoi(args[1])
		return "$OK"
	case "EVALSHA", "EVAL":
		return runScript(ks, db, args)
	}
	panic("model: unknown command " + name)
}

// blpopStep checks a BLPOP's reply. A client that blocked is served from
// whichever key a push made ready, even if a key before it has since become
// a string or a list, so the model asks only: a popped element was the
// head of its key; WRONGTYPE saw a string among the keys; a timeout (nil)
// saw no non-empty list.
func blpopStep(ks *Keyspace, args []string, reply string) []interface{} {
	keys := args[1 : len(args)-1]
	d := ks.db[0]
	switch {
	case reply == "nil":
		for _, k := range keys {
			if v, ok := d[k]; ok && v.isList {
				return nil
			}
		}
		return []interface{}{ks}
	case reply == "!WRONGTYPE":
		for _, k := range keys {
			if v, ok := d[k]; ok && !v.isList {
				return []interface{}{ks}
			}
		}
		return nil
	}
	for _, k := range keys {
		if v, ok := d[k]; ok && v.isList && "[$"+k+",$"+v.list[0]+"]" == reply {
			next := ks.clone()
			pop(next.db[0], k, true)
			next.finish()
			return []interface{}{next}
		}
	}
	return nil
}

func pop(d map[string]value, key string, left bool) string {
	v, ok := d[key]
	switch {
	case !ok:
		return "nil"
	case !v.isList:
		return "!WRONGTYPE"
	}
	var item string
	var rest []string
	if left {
		item, rest = v.list[0], v.list[1:]
	} else {
		item, rest = v.list[len(v.list)-1], v.list[:len(v.list)-1]
	}
	if len(rest) == 0 {
		delete(d, key)
	} else {
		d[key] = value{isList: true, list: rest}
	}
	return "$" + item
}

// move is LMOVE: the element popped from one end of src is pushed to one
// end of dst (src may be dst: a rotation). A missing src answers nil
// before dst's type is looked at, as in Redis.
func move(d map[string]value, src, dst string, fromLeft, toLeft bool) string {
	v, ok := d[src]
	switch {
	case !ok:
		return "nil"
	case !v.isList:
		return "!WRONGTYPE"
	}
	if w, ok := d[dst]; ok && !w.isList {
		return "!WRONGTYPE"
	}
	item := pop(d, src, fromLeft)
	w := d[dst]
	list := make([]string, 0, len(w.list)+1)
	if toLeft {
		list = append(append(list, item[1:]), w.list...)
	} else {
		list = append(append(list, w.list...), item[1:])
	}
	d[dst] = value{isList: true, list: list}
	return item
}

// lrem removes up to count occurrences of item (count > 0 from the head,
// < 0 from the tail, 0 all of them) and answers how many it removed.
func lrem(d map[string]value, key string, count int, item string) string {
	v, ok := d[key]
	switch {
	case !ok:
		return ":0"
	case !v.isList:
		return "!WRONGTYPE"
	}
	limit := count
	if limit < 0 {
		limit = -limit
	}
	keep := make([]bool, len(v.list))
	removed := 0
	for n := range v.list {
		i := n
		if count < 0 {
			i = len(v.list) - 1 - n
		}
		if v.list[i] == item && (limit == 0 || removed < limit) {
			removed++
			continue
		}
		keep[i] = true
	}
	var rest []string
	for i, it := range v.list {
		if keep[i] {
			rest = append(rest, it)
		}
	}
	if len(rest) == 0 {
		delete(d, key)
	} else {
		d[key] = value{isList: true, list: rest}
	}
	return ":" + strconv.Itoa(removed)
}

// lrange applies Redis's index rules (negative from the end, clamped).
func lrange(list []string, start, stop int) []string {
	n := len(list)
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if stop >= n {
		stop = n - 1
	}
	if start > stop || start >= n {
		return nil
	}
	return list[start : stop+1]
}

func encodeList(items []string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = "$" + it
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// apply runs the commands of in on a clone of ks and returns the clone and
// the replies.
func apply(ks *Keyspace, in *Input) (*Keyspace, []string) {
	next := ks.clone()
	db := 0
	replies := make([]string, len(in.Cmds))
	for i, c := range in.Cmds {
		replies[i] = runCommand(next, &db, c)
	}
	next.finish()
	return next, replies
}

// watchHolds says whether the WATCHed keys still read as they did after
// WATCH, which a committed EXEC requires.
func watchHolds(ks *Keyspace, in *Input) bool {
	probe := ks.clone()
	db := 0
	for i, k := range in.Watch {
		if runCommand(probe, &db, []string{"GET", k}) != in.Seen[i] {
			return false
		}
	}
	return true
}

// step is the nondeterministic step: the states the operation may lead to.
func step(state, input, output interface{}) []interface{} {
	ks := state.(*Keyspace)
	in := input.(*Input)
	out := output.(*Output)
	if out.Aborted {
		return []interface{}{ks}
	}
	if out.Unknown {
		// A WATCH whose reads did not all come back never sent EXEC.
		if in.Kind == "watch" && (len(in.Seen) != len(in.Watch) || !watchHolds(ks, in)) {
			return []interface{}{ks}
		}
		next, _ := apply(ks, in)
		return []interface{}{ks, next}
	}
	if in.Kind == "watch" && !watchHolds(ks, in) {
		return nil
	}
	if in.Cmds[0][0] == "BLPOP" {
		return blpopStep(ks, in.Cmds[0], out.Replies[0])
	}
	next, replies := apply(ks, in)
	if len(replies) != len(out.Replies) {
		return nil
	}
	for i := range replies {
		if replies[i] != out.Replies[i] {
			return nil
		}
	}
	return []interface{}{next}
}

func describeOp(input, output interface{}) string {
	out := output.(*Output)
	text := describeInput(input.(*Input))
	switch {
	case out.Aborted:
		return text + " -> aborted"
	case out.Unknown:
		return text + " -> ? " + out.Note
	}
	return text + " -> " + strings.Join(out.Replies, "; ")
}

// describeInput is an operation as commands.
func describeInput(in *Input) string {
	cmds := make([]string, len(in.Cmds))
	for i, c := range in.Cmds {
		cmds[i] = strings.Join(c, " ")
	}
	text := strings.Join(cmds, "; ")
	if in.Kind == "multi" || in.Kind == "watch" || in.Kind == "snapshot" {
		text = "MULTI " + text + " EXEC"
	}
	if in.Kind == "watch" {
		text = fmt.Sprintf("WATCH %v seen %v; %s", in.Watch, in.Seen, text)
	}
	return text
}

// newModel is the Porcupine model; byKey partitions the history by key,
// valid only when no operation names several keys or a whole database.
func newModel(byKey bool) porcupine.Model {
	nm := keyspaceModel()
	if byKey {
		nm.Partition = partitionByKey
	}
	return nm.ToModel()
}

// newComponentModel partitions the history into groups of keys that no
// operation joins: an operation on several keys (BLPOP a b, BLMOVE a b)
// puts them in one group. None may act on a whole database.
func newComponentModel() porcupine.Model {
	nm := keyspaceModel()
	nm.Partition = partitionByComponent
	return nm.ToModel()
}

func keyspaceModel() porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Init:              func() []interface{} { return []interface{}{emptyKeyspace()} },
		Step:              step,
		Equal:             func(a, b interface{}) bool { return a.(*Keyspace).canon == b.(*Keyspace).canon },
		Hash:              func(s interface{}) uint64 { return s.(*Keyspace).hash },
		DescribeOperation: describeOp,
		DescribeState:     func(s interface{}) string { return s.(*Keyspace).canon },
	}
}

func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	parts := map[string][]porcupine.Operation{}
	var order []string
	for _, op := range history {
		in := op.Input.(*Input)
		if in.Wide || len(in.Keys) != 1 {
			return [][]porcupine.Operation{history}
		}
		k := in.Keys[0]
		if _, ok := parts[k]; !ok {
			order = append(order, k)
		}
		parts[k] = append(parts[k], op)
	}
	out := make([][]porcupine.Operation, 0, len(order))
	for _, k := range order {
		out = append(out, parts[k])
	}
	return out
}

// partitionByComponent puts the operations of keys that some operation
// names together in one partition (union-find over each operation's keys),
// in the order their first operation appears.
func partitionByComponent(history []porcupine.Operation) [][]porcupine.Operation {
	parent := map[string]string{}
	var find func(k string) string
	find = func(k string) string {
		p, ok := parent[k]
		if !ok {
			parent[k] = k
			return k
		}
		if p == k {
			return k
		}
		root := find(p)
		parent[k] = root
		return root
	}
	for _, op := range history {
		in := op.Input.(*Input)
		if in.Wide || len(in.Keys) == 0 {
			return [][]porcupine.Operation{history}
		}
		first := find(in.Keys[0])
		for _, k := range in.Keys[1:] {
			if root := find(k); root != first {
				parent[root] = first
			}
		}
	}
	parts := map[string][]porcupine.Operation{}
	var order []string
	for _, op := range history {
		root := find(op.Input.(*Input).Keys[0])
		if _, ok := parts[root]; !ok {
			order = append(order, root)
		}
		parts[root] = append(parts[root], op)
	}
	out := make([][]porcupine.Operation, 0, len(order))
	for _, root := range order {
		out = append(out, parts[root])
	}
	return out
}
