// The queue workload: producers RPUSH unique values to a few lists and
// consumers take them from the head with BLPOP (one key or two), BLMOVE
// LEFT RIGHT into a done list of their own (then LREM it, or read it
// first, as a reliable-queue worker acknowledges a job), LPOP, and from the
// tail with BRPOPLPUSH (into the done list too). Blocking pops wait 10 to
// 50 ms or 0.2 to 0.5 s; a racing pair of connections sends a blocking pop
// on one and, without waiting for it, a push on the other (sometimes
// followed at once by an LPOP, sometimes delayed to about the pop's
// timeout), so that wake-ups race pushes, pops and timeouts. Producers
// pause 5 to 35 ms between pushes, so that consumers outpace them and
// mostly wait, and push (as the racing pair does) to one group of keys at
// a time, switching every 0.5 s, so that the other group drains and long
// timeouts expire too. After a kill -9, a consumer first reads its done
// lists and acknowledges what it finds there, as a worker restarting
// would. The tail pops of BRPOPLPUSH are checked by the model like the
// others but take no part in the FIFO check (queuecheck.go).
//
// When every client has stopped, one more client reads every list: those
// reads close the history. The history is checked twice: by Porcupine
// against the keyspace model (model.go, one partition per group of keys,
// queuecheck.go explains how a blocking pop is placed), and by the
// whole-history checks of queuecheck.go, which name what went wrong.
package main

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

const (
	queueGroups    = 2 // groups of keys no operation joins: Porcupine checks each alone
	queuesPerGroup = 2 // a two-key BLPOP names both keys of its group
	queueProducers = 3
	queueConsumers = 4
	queueConns     = queueProducers + queueConsumers + 2 // and the racing pair
	quietPhase     = 500 * time.Millisecond
)

type queueConfig struct {
	name     string
	maxOps   int
	duration time.Duration
	kill     bool
	seed     int64
}

func queueKey(group, i int) string { return fmt.Sprintf("q%d.%d", group, i) }

func doneKey(group, worker int) string { return fmt.Sprintf("q%d.done.c%d", group, worker) }

func isDoneKey(key string) bool { return strings.Contains(key, ".done.") }

// qconn is one connection of the workload and the operations it recorded.
type qconn struct {
	r           *run
	c           *conn
	rng         *rand.Rand
	worker      int
	id          int // Porcupine client id: moves on after an unknown outcome
	seq         int
	ops         []porcupine.Operation
	reconnected bool // the server restarted since the last recovery
}

func newQconn(r *run, worker int, seed int64) *qconn {
	return &qconn{r: r, c: newConn(r), rng: rand.New(rand.NewSource(seed*1000 + int64(worker))), worker: worker, id: worker}
}

// do sends one command and records it; the reply is nil when nothing was
// sent (no connection).
func (q *qconn) do(args ...string) *Output {
	gen := q.c.gen
	rdb := q.c.ready()
	if q.c.gen != gen {
		q.reconnected = true
	}
	in := &Input{Kind: "cmd", Cmds: [][]string{args}, Keys: commandKeys(args)}
	q.r.issued.Add(1)
	op, sent := record(q.r, rdb, in, q.id)
	if !sent {
		return nil
	}
	q.ops = append(q.ops, op)
	out := op.Output.(*Output)
	if out.Unknown {
		q.id += queueConns
	}
	return out
}

// value is a unique element: its producer and its place in that
// producer's pushes.
func (q *qconn) value() string {
	q.seq++
	return fmt.Sprintf("p%d.%d", q.worker, q.seq)
}

// popped is the element a single-element reply names, or "".
func popped(out *Output) string {
	if out == nil || out.Unknown || len(out.Replies) != 1 || !strings.HasPrefix(out.Replies[0], "$") {
		return ""
	}
	return out.Replies[0][1:]
}

// acknowledge is a reliable worker's end of a job taken into done: LREM
// it, or read the done list first, or (now and then) leave it there.
func (q *qconn) acknowledge(done, item string) {
	switch n := q.rng.Intn(100); {
	case n < 60:
		q.do("LREM", done, "1", item)
	case n < 85:
		q.do("LRANGE", done, "0", "-1")
		q.do("LREM", done, "1", item)
	}
}

// recoverDone is a worker starting again: what its done lists hold was
// taken but not acknowledged.
func (q *qconn) recoverDone() {
	q.reconnected = false
	for g := 0; g < queueGroups; g++ {
		done := doneKey(g, q.worker)
		out := q.do("LRANGE", done, "0", "-1")
		if out == nil || out.Unknown {
			q.reconnected = true // try again next time
			continue
		}
		for _, item := range decodeList(out.Replies[0]) {
			q.do("LREM", done, "1", item)
		}
	}
}

// queueTimeout is a blocking pop's timeout in seconds, as sent.
func queueTimeout(rng *rand.Rand, longPercent int) string {
	if rng.Intn(100) < longPercent {
		return []string{"0.2", "0.3", "0.5"}[rng.Intn(3)]
	}
	return []string{"0.01", "0.02", "0.05"}[rng.Intn(3)]
}

// openKeys are the keys producers push to now, as (group, index): each
// group is quiet for one phase in two (the other one is open).
func openKeys(r *run) [][2]int {
	var open [][2]int
	phase := int(time.Since(r.start) / quietPhase)
	for g := 0; g < queueGroups; g++ {
		for i := 0; i < queuesPerGroup; i++ {
			if (phase+g)%2 == 0 {
				open = append(open, [2]int{g, i})
			}
		}
	}
	return open
}

func producer(q *qconn) {
	for q.r.within() {
		open := openKeys(q.r)
		at := open[q.rng.Intn(len(open))]
		args := []string{"RPUSH", queueKey(at[0], at[1])}
		for n := 1 + q.rng.Intn(3); n > 0; n-- {
			args = append(args, q.value())
		}
		q.do(args...)
		time.Sleep(time.Duration(5+q.rng.Intn(30)) * time.Millisecond)
	}
}

func consumer(q *qconn) {
	for q.r.within() {
		if q.reconnected {
			q.recoverDone()
		}
		g := q.rng.Intn(queueGroups)
		i := q.rng.Intn(queuesPerGroup)
		key, other := queueKey(g, i), queueKey(g, 1-i)
		done := doneKey(g, q.worker)
		timeout := queueTimeout(q.rng, 40)
		switch n := q.rng.Intn(100); {
		case n < 25:
			q.do("BLPOP", key, timeout)
		case n < 40:
			q.do("BLPOP", key, other, timeout)
		case n < 60:
			if item := popped(q.do("BLMOVE", key, done, "LEFT", "RIGHT", timeout)); item != "" {
				q.acknowledge(done, item)
			}
		case n < 75:
			if item := popped(q.do("BRPOPLPUSH", key, done, timeout)); item != "" {
				q.acknowledge(done, item)
			}
		case n < 90:
			q.do("LPOP", key)
		default:
			q.do("LRANGE", key, "0", "-1")
		}
	}
}

// racer: popper sends a blocking pop and pusher, without waiting for its
// reply, pushes to the same key: at once, at once and then an LPOP, or
// about when the pop's timeout expires.
func racer(popper, pusher *qconn) {
	rng := pusher.rng
	for popper.r.within() {
		if popper.reconnected {
			popper.recoverDone()
		}
		open := openKeys(popper.r)
		at := open[rng.Intn(len(open))]
		g, i := at[0], at[1]
		key, other := queueKey(g, i), queueKey(g, 1-i)
		done := doneKey(g, popper.worker)
		timeout := queueTimeout(rng, 10)
		var pop []string
		switch rng.Intn(4) {
		case 0:
			pop = []string{"BLPOP", key, timeout}
		case 1:
			pop = []string{"BLPOP", other, key, timeout}
		case 2:
			pop = []string{"BLMOVE", key, done, "LEFT", "RIGHT", timeout}
		default:
			pop = []string{"BRPOPLPUSH", key, done, timeout}
		}
		reply := make(chan *Output, 1)
		go func() { reply <- popper.do(pop...) }()
		switch n := rng.Intn(100); {
		case n < 40:
			pusher.do("RPUSH", key, pusher.value())
		case n < 70:
			pusher.do("RPUSH", key, pusher.value())
			pusher.do("LPOP", key)
		default:
			seconds, _ := strconv.ParseFloat(timeout, 64)
			jitter := time.Duration(rng.Intn(5)-2) * time.Millisecond
			time.Sleep(time.Duration(seconds*float64(time.Second)) + jitter)
			pusher.do("RPUSH", key, pusher.value())
		}
		out := <-reply
		if item := popped(out); item != "" && pop[0] != "BLPOP" {
			popper.do("LREM", done, "1", item)
		}
	}
}

func runQueue(srv *Server, cfg queueConfig, artefacts string) result {
	res := result{name: cfg.name}
	r, stop, killerDone, err := begin(srv, cfg.maxOps, cfg.duration, cfg.kill)
	if err != nil {
		res.fail("FLUSHALL before the run: %v", err)
		return res
	}
	conns := make([]*qconn, queueConns)
	for i := range conns {
		conns[i] = newQconn(r, i, cfg.seed)
	}
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for i := 0; i < queueProducers; i++ {
		q := conns[i]
		run(func() { producer(q) })
	}
	for i := queueProducers; i < queueProducers+queueConsumers; i++ {
		q := conns[i]
		run(func() { consumer(q) })
	}
	run(func() { racer(conns[queueConns-2], conns[queueConns-1]) })
	wg.Wait()
	close(stop)
	<-killerDone
	for _, q := range conns {
		q.c.close()
	}
	if r.killErr != nil {
		res.fail("restart after kill -9: %v", r.killErr)
		return res
	}
	var history []porcupine.Operation
	for _, q := range conns {
		history = append(history, q.ops...)
	}
	final, err := finalReads(r, queueConns*1000)
	if err != nil {
		res.fail("the closing reads: %v", err)
		return res
	}
	history = append(history, final...)
	res.ops = len(history)
	for _, n := range r.notes {
		res.fail("unexpected error reply: %s", n)
	}
	if cfg.kill && r.restarted == 0 {
		res.fail("the server was never killed (run too short)")
	}
	began := time.Now()
	anomalies, summary := CheckQueue(history)
	for _, a := range anomalies {
		res.fail("%s: %s", a.Kind, a.Detail)
	}
	res.excerpt = append(res.excerpt, summary)
	checkLinear(&res, history, newComponentModel(), artefacts)
	res.checking = time.Since(began)
	return res
}

// finalReads reads every queue and done list once no client runs.
func finalReads(r *run, client int) ([]porcupine.Operation, error) {
	c := newConn(r)
	defer c.close()
	var keys []string
	for g := 0; g < queueGroups; g++ {
		for i := 0; i < queuesPerGroup; i++ {
			keys = append(keys, queueKey(g, i))
		}
		for w := queueProducers; w < queueConns-1; w++ {
			keys = append(keys, doneKey(g, w))
		}
	}
	var ops []porcupine.Operation
	for _, k := range keys {
		args := []string{"LRANGE", k, "0", "-1"}
		in := &Input{Kind: "cmd", Cmds: [][]string{args}, Keys: []string{k}, Final: true}
		op, sent := record(r, c.ready(), in, client)
		if !sent || op.Output.(*Output).Unknown {
			return nil, fmt.Errorf("LRANGE %s had no reply", k)
		}
		ops = append(ops, op)
	}
	return ops, nil
}
