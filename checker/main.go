// Command checker drives a Redis-compatible server with many concurrent
// clients and checks what they saw: linearizability of single commands,
// MULTI/EXEC (with WATCH) and scripts against a model of the keyspace
// (Porcupine), and transactional anomalies of a list-append workload (an
// Elle-style dependency-graph check). See README.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"
)

// mode is one server configuration the histories run against.
type mode struct {
	name string
	args []string
}

func main() {
	firnBin := flag.String("firn", os.Getenv("FIRN_BIN"), "firn binary to start (default $FIRN_BIN)")
	useRedis := flag.Bool("redis", false, "check redis-server instead of firn (proves the model and the checks)")
	redisBin := flag.String("redis-server", "redis-server", "redis-server binary for -redis")
	addr := flag.String("addr", "", "check an already running server at host:port (no kill -9; its data is FLUSHALLed)")
	modes := flag.String("modes", "default,cold", "firn configurations: default, cold (debug-cold-reads yes, writer-threads 2)")
	workloads := flag.String("workloads", "perkey,mixed,listappend,streamappend,queue", "workloads: perkey, mixed, listappend, streamappend, queue")
	kill := flag.Bool("kill", true, "also run histories with a kill -9 and restart halfway (servers the checker starts)")
	duration := flag.Duration("duration", 60*time.Second, "time budget of the run: rounds with new seeds follow one another while the next one fits")
	roundTime := flag.Duration("round", 60*time.Second, "nominal length of one round: each history may send operations for 60% of its share")
	clients := flag.Int("clients", 12, "concurrent clients (perkey, listappend)")
	mixedClients := flag.Int("mixed-clients", 8, "concurrent clients of the mixed workload (one Porcupine partition: its check time grows steeply with concurrency)")
	keys := flag.Int("keys", 6, "keys of the linearizability workloads")
	maxOps := flag.Int("ops", 3000, "most operations in one history")
	mixedOps := flag.Int("mixed-ops", 1500, "most operations in one mixed history")
	seed := flag.Int64("seed", time.Now().UnixNano()%1000000, "random seed")
	artefacts := flag.String("out", "", "directory for failure artefacts (default: a new temp dir per failure)")
	checkTimeout := flag.Duration("check-timeout", 30*time.Second, "Porcupine's time limit per history")
	inconclusive := flag.String("inconclusive", "fail", "an inconclusive (timed-out) check: fail or pass")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}

	porcupineTimeout = *checkTimeout
	inconclusiveFails = *inconclusive != "pass"
	stopAllOnSignal()

	var servers []mode
	switch {
	case *addr != "":
		servers = []mode{{name: "external"}}
	case *useRedis:
		servers = []mode{{name: "redis", args: []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no"}}}
	default:
		if *firnBin == "" {
			fmt.Fprintln(os.Stderr, "checker: give -firn, FIRN_BIN, -redis or -addr")
			os.Exit(2)
		}
		for _, m := range strings.Split(*modes, ",") {
			switch m {
			case "default":
				servers = append(servers, mode{name: "default"})
			case "cold":
				servers = append(servers, mode{name: "cold", args: []string{"--debug-cold-reads", "yes", "--writer-threads", "2"}})
			default:
				fmt.Fprintf(os.Stderr, "checker: unknown mode %q\n", m)
				os.Exit(2)
			}
		}
	}

	plan := planHistories(strings.Split(*workloads, ","), *kill && *addr == "")
	perHistory := *roundTime / time.Duration(len(servers)*len(plan)) * 6 / 10
	fmt.Printf("checker: seed %d, %d clients, %d histories per round, %v of operations each\n",
		*seed, *clients, len(servers)*len(plan), perHistory.Round(time.Millisecond))

	var passed, failed int
	began := time.Now()
	var lastRound time.Duration
	for round := 0; round == 0 || time.Since(began)+lastRound <= *duration; round++ {
		roundBegan := time.Now()
		if round > 0 {
			fmt.Printf("checker: round %d, seed %d\n", round+1, *seed+int64(round)*7919)
		}
		for _, m := range servers {
			p, f := runMode(m, plan, settings{
				firn: *firnBin, redis: *redisBin, addr: *addr, useRedis: *useRedis,
				clients: *clients, keys: *keys, maxOps: *maxOps, perHistory: perHistory,
				mixedClients: *mixedClients, mixedOps: *mixedOps,
				seed: *seed + int64(round)*7919, artefacts: *artefacts,
			})
			if f < 0 {
				// No server: nothing to repeat.
				fmt.Printf("checker: %d passed, %d failed\n", passed, failed-f)
				os.Exit(1)
			}
			passed += p
			failed += f
		}
		lastRound = time.Since(roundBegan)
	}
	fmt.Printf("checker: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

type settings struct {
	firn, redis, addr      string
	useRedis               bool
	clients, keys, maxOps  int
	mixedClients, mixedOps int
	perHistory             time.Duration
	seed                   int64
	artefacts              string
}

type planned struct {
	workload string
	kill     bool
}

func planHistories(workloads []string, kill bool) []planned {
	var plan []planned
	for _, w := range workloads {
		plan = append(plan, planned{workload: w})
		if kill && w != "perkey" {
			plan = append(plan, planned{workload: w, kill: true})
		}
	}
	return plan
}

// runMode starts one server and runs the planned histories on it; a
// negative failed count means the server did not start.
func runMode(m mode, plan []planned, s settings) (passed, failed int) {
	var srv *Server
	var err error
	switch {
	case s.addr != "":
		srv = external(s.addr)
	case s.useRedis:
		srv, err = startServer("redis", s.redis, m.args)
	default:
		srv, err = startServer("firn-"+m.name, s.firn, m.args)
	}
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", m.name, err)
		return 0, -len(plan)
	}
	defer func() {
		srv.Stop()
		if failed == 0 {
			srv.RemoveDir() // a failed mode keeps its server log
		}
	}()
	for i, p := range plan {
		name := fmt.Sprintf("%s/%s", m.name, p.workload)
		if p.kill {
			name += "+kill9"
		}
		seed := s.seed*100 + int64(i)
		began := time.Now()
		var res result
		switch p.workload {
		case "perkey":
			res = runLinear(srv, linConfig{
				name: name, clients: s.clients, keys: s.keys, maxOps: s.maxOps,
				duration: s.perHistory, kill: p.kill, seed: seed,
			}, s.artefacts)
		case "mixed":
			res = runLinear(srv, linConfig{
				name: name, clients: s.mixedClients, keys: s.keys, maxOps: s.mixedOps,
				duration: s.perHistory, wide: true, kill: p.kill, seed: seed,
			}, s.artefacts)
		case "listappend", "streamappend":
			kind := listKind
			if p.workload == "streamappend" {
				kind = streamKind
			}
			res = runListAppend(srv, appendConfig{
				name: name, kind: kind, clients: s.clients, maxTxns: s.maxOps,
				duration: s.perHistory, kill: p.kill, seed: seed,
			}, s.artefacts)
		case "queue":
			res = runQueue(srv, queueConfig{
				name: name, maxOps: s.maxOps, duration: s.perHistory, kill: p.kill, seed: seed,
			}, s.artefacts)
		default:
			fmt.Printf("FAIL %s: unknown workload\n", name)
			failed++
			continue
		}
		res.elapsed = time.Since(began)
		report(res, srv)
		if res.ok() {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// report prints one history's verdict.
func report(res result, srv *Server) {
	if res.ok() {
		fmt.Printf("ok   %-28s %5d ops  %v (check %v)\n", res.name, res.ops, res.elapsed.Round(time.Millisecond), res.checking.Round(time.Millisecond))
		for _, line := range res.excerpt {
			fmt.Printf("     %s\n", line)
		}
		return
	}
	fmt.Printf("FAIL %-28s %5d ops  %v\n", res.name, res.ops, res.elapsed.Round(time.Millisecond))
	for i, f := range res.failures {
		if i == 12 {
			fmt.Printf("     ... and %d more\n", len(res.failures)-i)
			break
		}
		fmt.Printf("     %s\n", f)
	}
	for _, line := range res.excerpt {
		fmt.Printf("     %s\n", line)
	}
	for _, f := range res.files {
		fmt.Printf("     wrote %s\n", f)
	}
	if srv.owned {
		fmt.Printf("     server log %s\n", srv.logPath())
	}
}
