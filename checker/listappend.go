// The list-append workload for elle.go: transactions (MULTI/EXEC, EVAL,
// WATCH + MULTI/EXEC, and MULTI ... DISCARD) that RPUSH unique values to a
// few lists and read them whole with LRANGE 0 -1; or, as the stream-append
// workload, XADD them to streams (`XADD key * v <value>`) and read them
// whole with XRANGE - +, which must keep every append in order the same way. A WATCHed transaction's
// LRANGE before MULTI counts as part of it when EXEC commits (WATCH
// guarantees the key did not change); an aborted EXEC and a DISCARD are
// failed transactions, whose values must never be read. Keys rotate every
// few hundred transactions so that lists stay short.
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

type appendConfig struct {
	name     string
	kind     *appendKind
	clients  int
	maxTxns  int
	duration time.Duration
	kill     bool
	seed     int64
}

// appendLua runs micro-operations given as KEYS[i] with ARGV[2i-1] = "a"
// (append ARGV[2i]) or "r" (read), and returns one entry per operation.
const appendLua = `local out = {}
for i = 1, #KEYS do
  if ARGV[2*i-1] == 'a' then
    redis.call('RPUSH', KEYS[i], ARGV[2*i])
    out[i] = 0
  else
    out[i] = redis.call('LRANGE', KEYS[i], 0, -1)
  end
end
return out`

// appendKind is the structure a workload appends to: its commands and how a
// read's reply lists the values.
type appendKind struct {
	prefix     string // key names
	push, read string // command names, for descriptions
	lua        string
	appendArgs func(key, value string) []interface{}
	readArgs   func(key string) []interface{}
	values     func(val interface{}) ([]string, bool)
}

var listKind = &appendKind{
	prefix: "la", push: "RPUSH", read: "LRANGE", lua: appendLua,
	appendArgs: func(key, value string) []interface{} { return []interface{}{"RPUSH", key, value} },
	readArgs:   func(key string) []interface{} { return []interface{}{"LRANGE", key, 0, -1} },
	values: func(val interface{}) ([]string, bool) {
		items, ok := val.([]interface{})
		if !ok {
			return nil, false
		}
		out := make([]string, len(items))
		for i, it := range items {
			out[i], _ = it.(string)
		}
		return out, true
	},
}

// streamLua is appendLua for streams.
const streamLua = `local out = {}
for i = 1, #KEYS do
  if ARGV[2*i-1] == 'a' then
    redis.call('XADD', KEYS[i], '*', 'v', ARGV[2*i])
    out[i] = 0
  else
    out[i] = redis.call('XRANGE', KEYS[i], '-', '+')
  end
end
return out`

var streamKind = &appendKind{
	prefix: "sa", push: "XADD", read: "XRANGE", lua: streamLua,
	appendArgs: func(key, value string) []interface{} { return []interface{}{"XADD", key, "*", "v", value} },
	readArgs:   func(key string) []interface{} { return []interface{}{"XRANGE", key, "-", "+"} },
	// [[id, ["v", value]] ...]
	values: func(val interface{}) ([]string, bool) {
		entries, ok := val.([]interface{})
		if !ok {
			return nil, false
		}
		out := make([]string, len(entries))
		for i, e := range entries {
			entry, ok := e.([]interface{})
			if !ok || len(entry) != 2 {
				return nil, false
			}
			fields, ok := entry[1].([]interface{})
			if !ok || len(fields) != 2 {
				return nil, false
			}
			out[i], _ = fields[1].(string)
		}
		return out, true
	},
}

const keysLive = 4        // keys in use at once
const txnsPerKeyset = 250 // transactions before the window moves on

func runListAppend(srv *Server, cfg appendConfig, artefacts string) result {
	res := result{name: cfg.name}
	r, done, killerDone, err := begin(srv, cfg.maxTxns, cfg.duration, cfg.kill)
	if err != nil {
		res.fail("FLUSHALL before the run: %v", err)
		return res
	}
	var values atomic.Int64
	var ids atomic.Int64
	var wg sync.WaitGroup
	all := make([][]Txn, cfg.clients)
	for i := 0; i < cfg.clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			all[i] = appendClient(r, cfg, i, &values, &ids)
		}(i)
	}
	wg.Wait()
	close(done)
	<-killerDone
	if r.killErr != nil {
		res.fail("restart after kill -9: %v", r.killErr)
		return res
	}
	var txns []Txn
	for _, t := range all {
		txns = append(txns, t...)
	}
	res.ops = len(txns)
	for _, n := range r.notes {
		res.fail("unexpected error reply: %s", n)
	}
	if cfg.kill && r.restarted == 0 {
		res.fail("the server was never killed (run too short)")
	}
	began := time.Now()
	anomalies := CheckListAppend(txns)
	res.checking = time.Since(began)
	for _, a := range anomalies {
		res.fail("%s: %s", a.Kind, a.Detail)
	}
	if len(res.failures) > 20 {
		more := len(res.failures) - 20
		res.failures = append(res.failures[:20], fmt.Sprintf("... and %d more", more))
	}
	if !res.ok() {
		if dir, err := artefactDir(artefacts, res.name); err == nil {
			path := filepath.Join(dir, "list-append-history.txt")
			if os.WriteFile(path, []byte(txnsText(txns)), 0o644) == nil {
				res.files = append(res.files, path)
			}
		}
	}
	return res
}

func appendClient(r *run, cfg appendConfig, worker int, values, ids *atomic.Int64) []Txn {
	rng := rand.New(rand.NewSource(cfg.seed*1000 + int64(worker)))
	var txns []Txn
	c := newConn(r)
	defer c.close()
	for r.more() {
		rdb := c.ready()
		base := int(r.issued.Load()) / txnsPerKeyset
		key := func() string { return cfg.kind.prefix + strconv.Itoa(base+rng.Intn(keysLive)) }
		mop := func() Mop {
			if rng.Intn(2) == 0 {
				return Mop{Append: true, Key: key(), Value: strconv.FormatInt(values.Add(1), 10)}
			}
			return Mop{Key: key()}
		}
		t := Txn{ID: int(ids.Add(1))}
		var err error
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		switch n := rng.Intn(100); {
		case n < 45:
			for i := 1 + rng.Intn(4); i > 0; i-- {
				t.Mops = append(t.Mops, mop())
			}
			err = appendMulti(cfg.kind, ctx, rdb, &t, r)
		case n < 70:
			for i := 1 + rng.Intn(4); i > 0; i-- {
				t.Mops = append(t.Mops, mop())
			}
			err = appendEval(cfg.kind, ctx, rdb, &t, r)
		case n < 92:
			k := key()
			t.Mops = []Mop{{Key: k}, {Append: true, Key: k, Value: strconv.FormatInt(values.Add(1), 10)}}
			if rng.Intn(2) == 0 {
				t.Mops = append(t.Mops, mop())
			}
			err = appendWatch(cfg.kind, ctx, rdb, &t, r)
		default:
			t.Mops = []Mop{{Append: true, Key: key(), Value: strconv.FormatInt(values.Add(1), 10)}}
			err = appendDiscard(cfg.kind, ctx, rdb, &t)
		}
		cancel()
		if err != nil {
			if dialFailed, _ := classifyLost(err); dialFailed {
				continue // no connection: nothing was sent
			}
			t.Status = TxnInfo
			for i := range t.Mops {
				t.Mops[i].ReadKnown = false
			}
		}
		txns = append(txns, t)
	}
	return txns
}

func mopsText(k *appendKind, mops []Mop) string {
	parts := make([]string, len(mops))
	for i, m := range mops {
		if m.Append {
			parts[i] = k.push + " " + m.Key + " " + m.Value
		} else {
			parts[i] = k.read + " " + m.Key
		}
	}
	return strings.Join(parts, "; ")
}

// readReply fills a read mop from a read's reply (or notes an error).
func readReply(k *appendKind, m *Mop, val interface{}, err error, r *run, desc string) error {
	if err != nil {
		var rerr redis.Error
		if errors.As(err, &rerr) {
			r.note(fmt.Sprintf("%s: %s %s -> %v", desc, k.read, m.Key, err))
			return nil // the read is unknown; the transaction still ran
		}
		return err
	}
	values, ok := k.values(val)
	if !ok {
		r.note(fmt.Sprintf("%s: %s %s -> %v", desc, k.read, m.Key, val))
		return nil
	}
	m.Read = values
	m.ReadKnown = true
	return nil
}

func queue(k *appendKind, ctx context.Context, p redis.Pipeliner, mops []Mop) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(mops))
	for i, m := range mops {
		if m.Append {
			cmds[i] = p.Do(ctx, k.appendArgs(m.Key, m.Value)...)
		} else {
			cmds[i] = p.Do(ctx, k.readArgs(m.Key)...)
		}
	}
	return cmds
}

func appendMulti(k *appendKind, ctx context.Context, rdb *redis.Client, t *Txn, r *run) error {
	t.Desc = "MULTI " + mopsText(k, t.Mops) + " EXEC"
	var cmds []*redis.Cmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		cmds = queue(k, ctx, p, t.Mops)
		return nil
	})
	return finishExec(k, t, cmds, err, r)
}

// finishExec reads EXEC's replies into the mops.
func finishExec(k *appendKind, t *Txn, cmds []*redis.Cmd, err error, r *run) error {
	if errors.Is(err, redis.TxFailedErr) {
		t.Status = TxnFail
		return nil
	}
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		return err
	}
	t.Status = TxnOK
	for i := range t.Mops {
		val, cerr := cmds[i].Result()
		if cerr != nil && !errors.As(cerr, &rerr) {
			return cerr
		}
		if t.Mops[i].Append {
			if cerr != nil {
				// An error where Redis has none: whether the
				// transaction's appends happened is unknown.
				r.note(fmt.Sprintf("%s: %s -> %v", t.Desc, k.push, cerr))
				t.Status = TxnInfo
			}
			continue
		}
		if e := readReply(k, &t.Mops[i], val, cerr, r, t.Desc); e != nil {
			return e
		}
		if !t.Mops[i].ReadKnown {
			t.Status = TxnInfo
		}
	}
	if t.Status == TxnInfo {
		for i := range t.Mops {
			t.Mops[i].ReadKnown = false
		}
	}
	return nil
}

func appendEval(k *appendKind, ctx context.Context, rdb *redis.Client, t *Txn, r *run) error {
	t.Desc = "EVAL " + mopsText(k, t.Mops)
	keys := make([]string, len(t.Mops))
	argv := make([]interface{}, 0, 2*len(t.Mops))
	for i, m := range t.Mops {
		keys[i] = m.Key
		if m.Append {
			argv = append(argv, "a", m.Value)
		} else {
			argv = append(argv, "r", "")
		}
	}
	val, err := rdb.Eval(ctx, k.lua, keys, argv...).Result()
	if err != nil {
		var rerr redis.Error
		if errors.As(err, &rerr) {
			// A script error after some of its appends: they stay.
			r.note(fmt.Sprintf("%s -> %v", t.Desc, err))
		}
		return err
	}
	items, ok := val.([]interface{})
	if !ok || len(items) != len(t.Mops) {
		r.note(fmt.Sprintf("%s -> %v", t.Desc, val))
		return errors.New("malformed script reply")
	}
	for i := range t.Mops {
		if !t.Mops[i].Append {
			if e := readReply(k, &t.Mops[i], items[i], nil, r, t.Desc); e != nil {
				return e
			}
		}
	}
	t.Status = TxnOK
	return nil
}

// appendWatch: WATCH key; read key; MULTI; the other mops; EXEC.
func appendWatch(k *appendKind, ctx context.Context, rdb *redis.Client, t *Txn, r *run) error {
	key := t.Mops[0].Key
	t.Desc = "WATCH " + key + "; " + k.read + " " + key + "; MULTI " + mopsText(k, t.Mops[1:]) + " EXEC"
	var inner error
	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		val, err := tx.Do(ctx, k.readArgs(key)...).Result()
		if e := readReply(k, &t.Mops[0], val, err, r, t.Desc); e != nil {
			inner = e
			return e
		}
		var cmds []*redis.Cmd
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			cmds = queue(k, ctx, p, t.Mops[1:])
			return nil
		})
		if errors.Is(err, redis.TxFailedErr) {
			t.Status = TxnFail
			return nil
		}
		rest := Txn{Mops: t.Mops[1:], Desc: t.Desc}
		inner = finishExec(k, &rest, cmds, err, r)
		t.Status = rest.Status
		return inner
	}, key)
	if inner != nil {
		return inner
	}
	if err != nil {
		return err
	}
	if t.Status == TxnFail {
		t.Mops[0].ReadKnown = false
	}
	return nil
}

// appendDiscard: MULTI; an append; DISCARD on one connection.
func appendDiscard(k *appendKind, ctx context.Context, rdb *redis.Client, t *Txn) error {
	t.Desc = "MULTI " + mopsText(k, t.Mops) + " DISCARD"
	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.Do(ctx, "MULTI").Err(); err != nil {
		return err
	}
	if err := conn.Do(ctx, k.appendArgs(t.Mops[0].Key, t.Mops[0].Value)...).Err(); err != nil {
		return err
	}
	if err := conn.Do(ctx, "DISCARD").Err(); err != nil {
		return err
	}
	t.Status = TxnFail
	return nil
}

func txnsText(txns []Txn) string {
	var b strings.Builder
	for _, t := range txns {
		status := map[TxnStatus]string{TxnOK: "ok", TxnFail: "fail", TxnInfo: "info"}[t.Status]
		fmt.Fprintf(&b, "T%-6d %-4s %s\n", t.ID, status, t.Desc)
		for _, m := range t.Mops {
			if !m.Append && m.ReadKnown {
				fmt.Fprintf(&b, "         %s = %v\n", m.Key, short(m.Read))
			}
		}
	}
	return b.String()
}
