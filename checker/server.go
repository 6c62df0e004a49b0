// Servers the checker starts: firn (or redis-server, to prove the model)
// on a free 127.0.0.1 port with its data in a temp dir, killed with -9 and
// restarted on the same data when a history asks for it. Every process
// started is registered so that a signal, a panic or a failed check still
// stops it; on Linux the kernel also kills it if the checker dies
// (Pdeathsig).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

const startTimeout = 30 * time.Second

// Server is one server process (or an external address when cmd is nil).
type Server struct {
	name  string   // "firn", "redis" or "external"
	bin   string   // program to run
	args  []string // options after --port/--bind/--dir
	root  string   // temp dir: data/ and server.log
	port  int
	addr  string
	cmd   *exec.Cmd
	owned bool
}

var (
	liveMu sync.Mutex
	live   = map[*exec.Cmd]bool{}
)

// stopAllOnSignal kills every started server on SIGINT/SIGTERM, then exits.
func stopAllOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-ch
		killAll()
		fmt.Fprintf(os.Stderr, "checker: stopped by %v\n", sig)
		os.Exit(130)
	}()
}

func killAll() {
	liveMu.Lock()
	defer liveMu.Unlock()
	for c := range live {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	}
}

func external(addr string) *Server {
	return &Server{name: "external", addr: addr}
}

// startServer runs bin with args on a free port in a fresh temp dir.
func startServer(name, bin string, args []string) (*Server, error) {
	root, err := os.MkdirTemp("", "firn-checker-"+name+"-")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil {
		return nil, err
	}
	s := &Server{name: name, bin: bin, args: args, root: root, owned: true}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		if lastErr = s.spawn(port); lastErr == nil {
			return s, nil
		}
	}
	s.Stop()
	tail := logTail(s.logPath())
	s.RemoveDir()
	return nil, fmt.Errorf("%s did not start: %v%s", name, lastErr, tail)
}

// logTail is the end of a server log, for a message, or "".
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return ""
	}
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return "; log ends:\n" + string(data)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) Addr() string { return s.addr }

func (s *Server) logPath() string { return filepath.Join(s.root, "server.log") }

func (s *Server) dataDir() string { return filepath.Join(s.root, "data") }

// canKill says whether the server is ours to kill and restart.
func (s *Server) canKill() bool { return s.owned }

func (s *Server) spawn(port int) error {
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", s.dataDir()}
	cmd := exec.Command(s.bin, append(args, s.args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	liveMu.Lock()
	live[cmd] = true
	liveMu.Unlock()
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			s.forget(cmd)
			return fmt.Errorf("exited at start (port taken?)")
		case <-time.After(50 * time.Millisecond):
		}
		if servesDir(addr, s.dataDir()) {
			s.cmd, s.port, s.addr = cmd, port, addr
			return nil
		}
	}
	s.cmd = cmd
	s.kill()
	return fmt.Errorf("no PONG within %v", startTimeout)
}

// servesDir says whether the server on addr answers and uses dir, so that
// another process that took the port is never mistaken for ours.
func servesDir(addr, dir string) bool {
	c := redis.NewClient(clientOptions(addr))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	got, err := c.ConfigGet(ctx, "dir").Result()
	if err != nil {
		return false
	}
	want, _ := filepath.EvalSymlinks(dir)
	have, _ := filepath.EvalSymlinks(got["dir"])
	return want != "" && want == have
}

func (s *Server) forget(cmd *exec.Cmd) {
	liveMu.Lock()
	delete(live, cmd)
	liveMu.Unlock()
}

// kill sends SIGKILL and waits until the process is gone.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	for i := 0; i < 500; i++ {
		if syscall.Kill(s.cmd.Process.Pid, 0) != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.forget(s.cmd)
	s.cmd = nil
}

// Kill9 kills the server with SIGKILL (no restart).
func (s *Server) Kill9() { s.kill() }

// Restart starts the server again on its data, on the same port if free.
func (s *Server) Restart() error {
	for attempt := 0; attempt < 5; attempt++ {
		if s.spawn(s.port) == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	return s.spawn(port)
}

// Stop kills the server and removes its temp dir unless keep.
func (s *Server) Stop() {
	if !s.owned {
		return
	}
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		for i := 0; i < 200 && syscall.Kill(s.cmd.Process.Pid, 0) == nil; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		s.kill()
	}
}

// RemoveDir deletes the temp dir (data and log).
func (s *Server) RemoveDir() {
	if s.owned && s.root != "" {
		_ = os.RemoveAll(s.root)
	}
}

// clientOptions are go-redis options that send exactly the commands the
// workload records: RESP2, no retries (a retried write could apply twice),
// no identity or maintenance handshakes, one connection.
func clientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		Protocol:              2,
		MaxRetries:            -1,
		PoolSize:              1,
		DisableIdentity:       true,
		DialTimeout:           2 * time.Second,
		ReadTimeout:           5 * time.Second,
		WriteTimeout:          5 * time.Second,
		ContextTimeoutEnabled: true,
	}
}
