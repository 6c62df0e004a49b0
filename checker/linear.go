// The linearizability workload: many clients send random commands on a few
// keys, every operation's call and return times and reply are recorded, and
// Porcupine checks the history against the model of model.go.
//
// An operation without a reply (network error, timeout, a kill -9 in
// flight) is "unknown": it may or may not have taken effect. A connection
// error is seen after the server died or closed the connection, so the
// operation happened before that or never; a timeout may still run later,
// so its return time is the end of time. An error reply that Redis would
// never give here (e.g. a retry error) is unknown too, and also fails the
// history by itself.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// linConfig describes one history.
type linConfig struct {
	name     string
	clients  int
	keys     int
	maxOps   int
	duration time.Duration
	wide     bool // multi-key, db-wide and MULTI-with-FLUSHDB/SWAPDB operations
	kill     bool // kill -9 and restart the server halfway
	seed     int64
}

// run is what the clients of one history share.
type run struct {
	srv       *Server
	start     time.Time
	deadline  time.Time
	issued    atomic.Int64
	maxOps    int64
	down      atomic.Bool  // the server is being killed and restarted
	gen       atomic.Int64 // bumped at each restart: clients reconnect
	mu        sync.Mutex
	killErr   error
	notes     []string // unexpected error replies
	restarted int
}

func (r *run) now() int64 { return int64(time.Since(r.start)) }

func (r *run) more() bool {
	return time.Now().Before(r.deadline) && r.issued.Add(1) <= r.maxOps
}

// within says whether the run may send more without counting one: for
// loops whose every command counts itself (the queue workload).
func (r *run) within() bool {
	return time.Now().Before(r.deadline) && r.issued.Load() < r.maxOps
}

func (r *run) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.notes) < 50 {
		r.notes = append(r.notes, s)
	}
}

// killer kills the server with -9 halfway through (by time or operations)
// and starts it again on the same data.
func (r *run) killer(done <-chan struct{}) {
	half := r.start.Add(time.Until(r.deadline) / 2)
	for time.Now().Before(half) && r.issued.Load() < r.maxOps/2 {
		select {
		case <-done:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	r.down.Store(true) // clients start nothing new; what is in flight dies
	r.srv.Kill9()
	err := r.srv.Restart()
	r.mu.Lock()
	r.killErr = err
	r.restarted++
	r.mu.Unlock()
	r.gen.Add(1)
	r.down.Store(false)
}

// flushAll empties both databases before a history.
func flushAll(addr string) error {
	c := redis.NewClient(clientOptions(addr))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.FlushAll(ctx).Err()
}

// isLost tells a missing reply (and whether it may still run later) from a
// reply; dialFailed means the command was never sent.
func classifyLost(err error) (dialFailed, mayRunLater bool) {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return true, false
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return false, true
	}
	return false, false
}

// begin empties the server and starts a run of at most maxOps operations
// for d, with a kill -9 halfway when kill is set: done tells the killer the
// clients have stopped, and killerDone closes once it has finished.
func begin(srv *Server, maxOps int, d time.Duration, kill bool) (*run, chan struct{}, chan struct{}, error) {
	if err := flushAll(srv.Addr()); err != nil {
		return nil, nil, nil, err
	}
	r := &run{srv: srv, start: time.Now(), maxOps: int64(maxOps)}
	r.deadline = r.start.Add(d)
	done := make(chan struct{})
	killerDone := make(chan struct{})
	if kill {
		go func() { r.killer(done); close(killerDone) }()
	} else {
		close(killerDone)
	}
	return r, done, killerDone, nil
}

// conn is one client's connection, made again after each restart.
type conn struct {
	r   *run
	gen int64
	rdb *redis.Client
}

func newConn(r *run) *conn {
	return &conn{r: r, gen: r.gen.Load(), rdb: redis.NewClient(clientOptions(r.srv.Addr()))}
}

// ready waits while the server is down and reconnects after a restart.
func (c *conn) ready() *redis.Client {
	for c.r.down.Load() {
		time.Sleep(5 * time.Millisecond)
	}
	if g := c.r.gen.Load(); g != c.gen {
		c.rdb.Close()
		c.rdb = redis.NewClient(clientOptions(c.r.srv.Addr()))
		c.gen = g
	}
	return c.rdb
}

func (c *conn) close() { c.rdb.Close() }

// runLinear runs one history and checks it.
func runLinear(srv *Server, cfg linConfig, artefacts string) result {
	res := result{name: cfg.name}
	r, done, killerDone, err := begin(srv, cfg.maxOps, cfg.duration, cfg.kill)
	if err != nil {
		res.fail("FLUSHALL before the run: %v", err)
		return res
	}
	var wg sync.WaitGroup
	histories := make([][]porcupine.Operation, cfg.clients)
	for i := 0; i < cfg.clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			histories[i] = linClient(r, cfg, i)
		}(i)
	}
	wg.Wait()
	close(done)
	<-killerDone
	if r.killErr != nil {
		res.fail("restart after kill -9: %v", r.killErr)
		return res
	}
	var history []porcupine.Operation
	for _, h := range histories {
		history = append(history, h...)
	}
	res.ops = len(history)
	for _, n := range r.notes {
		res.fail("unexpected error reply: %s", n)
	}
	if cfg.kill && r.restarted == 0 {
		res.fail("the server was never killed (run too short)")
	}
	checkLinear(&res, history, newModel(!cfg.wide), artefacts)
	return res
}

// linClient is one client's loop; it returns its operations.
func linClient(r *run, cfg linConfig, worker int) []porcupine.Operation {
	rng := rand.New(rand.NewSource(cfg.seed*1000 + int64(worker)))
	gen := &opGen{rng: rng, keys: cfg.keys, wide: cfg.wide, client: worker}
	var ops []porcupine.Operation
	id := worker
	c := newConn(r)
	defer c.close()
	for r.more() {
		op, sent := record(r, c.ready(), gen.next(), id)
		if !sent {
			continue
		}
		ops = append(ops, op)
		if op.Output.(*Output).Unknown {
			// A new process id for the visualisation: the unknown
			// operation may overlap this client's next ones.
			id += cfg.clients
		}
	}
	return ops
}

// record sends one operation and returns it with its call and return
// times; sent is false when there was no connection (nothing was sent).
func record(r *run, rdb *redis.Client, in *Input, client int) (op porcupine.Operation, sent bool) {
	call := r.now()
	out, err := perform(rdb, in)
	ret := r.now()
	if err != nil {
		dialFailed, later := classifyLost(err)
		if dialFailed {
			return op, false
		}
		out = &Output{Unknown: true, Note: err.Error()}
		if later {
			ret = math.MaxInt64
		}
	} else if out.Unknown {
		r.note(fmt.Sprintf("%s -> %s", describeInput(in), out.Note))
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}, true
}

// perform sends one operation. An error return means no reply at all.
func perform(rdb *redis.Client, in *Input) (*Output, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch in.Kind {
	case "cmd", "eval":
		args := wireArgs(in.Cmds[0])
		text, o := encode(rdb.Do(ctx, args...).Result())
		return single(text, o)
	case "multi", "snapshot":
		cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range in.Cmds {
				p.Do(ctx, wireArgs(c)...)
			}
			return nil
		})
		return execReplies(cmds, err)
	case "watch":
		var out *Output
		var lostErr error
		err := rdb.Watch(ctx, func(tx *redis.Tx) error {
			in.Seen = make([]string, len(in.Watch))
			for i, k := range in.Watch {
				text, o := encode(tx.Get(ctx, k).Result())
				if o != definite {
					in.Seen = nil // EXEC is never sent
					lostErr = errors.New(text)
					return lostErr
				}
				in.Seen[i] = text
			}
			cmds, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				for _, c := range in.Cmds {
					p.Do(ctx, wireArgs(c)...)
				}
				return nil
			})
			out, lostErr = execReplies(cmds, err)
			return nil
		}, in.Watch...)
		if lostErr != nil {
			return nil, lostErr
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	panic("unknown operation kind " + in.Kind)
}

func single(text string, o outcome) (*Output, error) {
	switch o {
	case lost:
		return nil, errors.New(text[1:])
	case unexpected:
		return &Output{Unknown: true, Note: text}, nil
	}
	return &Output{Replies: []string{text}}, nil
}

// execReplies reads EXEC's replies from a transaction's commands.
func execReplies(cmds []redis.Cmder, err error) (*Output, error) {
	if errors.Is(err, redis.TxFailedErr) {
		return &Output{Aborted: true}, nil
	}
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		return nil, err
	}
	out := &Output{}
	for _, c := range cmds {
		text, o := encode(c.(*redis.Cmd).Result())
		switch o {
		case lost:
			return nil, errors.New(text[1:])
		case unexpected:
			out.Unknown, out.Note = true, text
		}
		out.Replies = append(out.Replies, text)
	}
	if out.Unknown {
		out.Replies = nil
	}
	return out, nil
}

// wireArgs turns a model command into what is sent: a script's name
// becomes its Lua text.
func wireArgs(c []string) []interface{} {
	args := make([]interface{}, len(c))
	for i, a := range c {
		args[i] = a
	}
	if c[0] == "EVAL" {
		args[1] = scripts[c[1]].lua
	}
	return args
}

// opGen draws random operations.
type opGen struct {
	rng    *rand.Rand
	keys   int
	wide   bool
	client int
	seq    int
}

func (g *opGen) key() string { return "k" + strconv.Itoa(g.rng.Intn(g.keys)) }

// item is a unique list element.
func (g *opGen) item() string {
	g.seq++
	return fmt.Sprintf("%d.%d", g.client, g.seq)
}

// str is a value for SET: mostly an integer, so that INCR has work.
func (g *opGen) str() string {
	if g.rng.Intn(8) == 0 {
		return "x" + strconv.Itoa(g.rng.Intn(10))
	}
	return strconv.Itoa(g.rng.Intn(20))
}

// keyCmd is a random command on one key.
func (g *opGen) keyCmd(k string) []string {
	switch n := g.rng.Intn(100); {
	case n < 14:
		return []string{"GET", k}
	case n < 26:
		return []string{"SET", k, g.str()}
	case n < 36:
		return []string{"INCR", k}
	case n < 40:
		return []string{"DEL", k}
	case n < 50:
		return []string{"LPUSH", k, g.item()}
	case n < 62:
		return []string{"RPUSH", k, g.item()}
	case n < 70:
		return []string{"LPOP", k}
	case n < 78:
		return []string{"RPOP", k}
	case n < 90:
		return []string{"LRANGE", k, "0", "-1"}
	case n < 94:
		return []string{"LLEN", k}
	}
	return []string{"TYPE", k}
}

func (g *opGen) next() *Input {
	if g.wide {
		return g.nextWide()
	}
	k := g.key()
	in := &Input{Keys: []string{k}}
	switch n := g.rng.Intn(100); {
	case n < 70:
		in.Kind, in.Cmds = "cmd", [][]string{g.keyCmd(k)}
	case n < 76:
		in.Kind, in.Cmds = "cmd", [][]string{{"BLPOP", k, "0.05"}}
	case n < 88:
		in.Kind, in.Cmds = "multi", [][]string{g.keyCmd(k), g.keyCmd(k), g.keyCmd(k)}
	case n < 95:
		in.Kind, in.Watch, in.Cmds = "watch", []string{k}, [][]string{g.keyCmd(k), g.keyCmd(k)}
	default:
		in.Kind, in.Cmds = "eval", [][]string{{"EVAL", "move", "2", k, k}}
	}
	return in
}

// dbWide is FLUSHDB or SWAPDB 0 1.
func (g *opGen) dbWide() []string {
	if g.rng.Intn(2) == 0 {
		return []string{"FLUSHDB"}
	}
	return []string{"SWAPDB", "0", "1"}
}

func (g *opGen) nextWide() *Input {
	in := &Input{Wide: true}
	switch n := g.rng.Intn(100); {
	case n < 45:
		in.Kind, in.Cmds = "cmd", [][]string{g.keyCmd(g.key())}
	case n < 48:
		in.Kind, in.Cmds = "cmd", [][]string{{"DEL", g.key(), g.key()}}
	case n < 53:
		in.Kind, in.Cmds = "cmd", [][]string{{"BLPOP", g.key(), g.key(), "0.05"}}
	case n < 56:
		in.Kind, in.Cmds = "cmd", [][]string{g.dbWide()}
	case n < 70:
		// A transaction, often with FLUSHDB or SWAPDB in the middle and
		// reads and writes after it.
		in.Kind = "multi"
		size := 2 + g.rng.Intn(4)
		wideAt := -1
		if g.rng.Intn(3) > 0 {
			wideAt = g.rng.Intn(size - 1)
		}
		for i := 0; i < size; i++ {
			if i == wideAt {
				in.Cmds = append(in.Cmds, g.dbWide())
			} else {
				in.Cmds = append(in.Cmds, g.keyCmd(g.key()))
			}
		}
	case n < 78:
		in.Kind = "watch"
		in.Watch = []string{g.key()}
		if g.rng.Intn(2) == 0 {
			in.Watch = append(in.Watch, g.key())
		}
		in.Cmds = [][]string{g.keyCmd(in.Watch[0]), g.keyCmd(g.key())}
		if g.rng.Intn(4) == 0 {
			in.Cmds = append(in.Cmds, g.dbWide(), g.keyCmd(g.key()))
		}
	case n < 94:
		in.Kind = "eval"
		switch g.rng.Intn(5) {
		case 0:
			in.Cmds = [][]string{{"EVAL", "incr_push", "2", g.key(), g.key()}}
		case 1:
			in.Cmds = [][]string{{"EVAL", "move", "2", g.key(), g.key()}}
		case 2:
			in.Cmds = [][]string{{"EVAL", "read_all", "3", g.key(), g.key(), g.key()}}
		case 3:
			in.Cmds = [][]string{{"EVAL", "flush_then", "2", g.key(), g.key(), g.item()}}
		default:
			in.Cmds = [][]string{{"EVAL", "swap_then", "1", g.key(), g.str()}}
		}
	default:
		in.Kind = "snapshot"
		for db := 1; db >= 0; db-- {
			if db == 1 {
				in.Cmds = append(in.Cmds, []string{"SELECT", "1"})
			} else {
				in.Cmds = append(in.Cmds, []string{"SELECT", "0"})
			}
			for i := 0; i < g.keys; i++ {
				k := "k" + strconv.Itoa(i)
				in.Cmds = append(in.Cmds, []string{"TYPE", k}, []string{"GET", k}, []string{"LRANGE", k, "0", "-1"})
			}
		}
	}
	for _, c := range in.Cmds {
		in.Keys = append(in.Keys, commandKeys(c)...)
	}
	return in
}

// commandKeys lists the keys a model command names.
func commandKeys(c []string) []string {
	switch c[0] {
	case "FLUSHDB", "SWAPDB", "SELECT":
		return nil
	case "EVAL":
		n, _ := strconv.Atoi(c[2])
		return c[3 : 3+n]
	case "BLPOP", "DEL":
		if c[0] == "BLPOP" {
			return c[1 : len(c)-1]
		}
		return c[1:]
	case "LMOVE", "BLMOVE", "RPOPLPUSH", "BRPOPLPUSH":
		return c[1:3]
	}
	return c[1:2]
}
