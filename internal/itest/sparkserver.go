package itest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// sharedSpark holds the test binary's Spark sessions, one per environment.
// Starting a session costs ~30 CPU-seconds (a JVM, Spark and its Hive
// client), more than the queries a test sends, and the integration packages
// read back with Spark a dozen times while sharing two cores.
var sharedSpark = &sparkPool{sessions: map[string]*pooledSpark{}}

type sparkPool struct {
	mu       sync.Mutex
	sessions map[string]*pooledSpark
}

// pooledSpark is one environment's session: calls take turns on it.
type pooledSpark struct {
	mu     sync.Mutex
	env    []string
	srv    *sparkServer
	served int // requests the running server has answered; 0 without one
}

func (p *sparkPool) session(env []string) *pooledSpark {
	key := strings.Join(append([]string{SparkPython(), SparkScript()}, env...), "\x00")
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sessions[key]
	if s == nil {
		s = &pooledSpark{env: env}
		p.sessions[key] = s
	}
	return s
}

// run sends the queries to env's session, starting it if it is not running.
// A session that answered earlier calls and fails this one may be stale
// (a metastore connection lost in an outage test, say), so the call is then
// made once more on a new session: the answer a test gets is always one a
// new session gave, as when every call started its own.
func (p *sparkPool) run(ctx context.Context, env []string, queries []string) ([]Rows, error) {
	s := p.session(env)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil && s.srv.exitedNow() {
		s.stop() // died between calls: this call starts a new session
	}
	reused := s.served > 0
	res, err := s.query(ctx, queries)
	if err == nil || !reused || ctx.Err() != nil {
		return res, err
	}
	s.stop()
	return s.query(ctx, queries)
}

func (s *pooledSpark) query(ctx context.Context, queries []string) ([]Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, SparkTimeout)
	defer cancel()
	if s.srv == nil {
		srv, err := startSparkServer(s.env)
		if err != nil {
			return nil, err
		}
		s.srv, s.served = srv, 0
	}
	res, err := s.srv.query(ctx, queries)
	if s.srv.exitedNow() {
		s.stop()
		return res, err
	}
	s.served++
	return res, err
}

func (s *pooledSpark) stop() {
	if s.srv != nil {
		s.srv.kill()
	}
	s.srv, s.served = nil, 0
}

// sparkServer is one `spark_sql.py --serve` process: one SparkSession that
// answers a request (a line of JSON on its stdin) at a time with a line on
// its reply pipe, until its stdin closes. It runs in a process group of
// its own, so that killing it also kills pyspark's JVM.
type sparkServer struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan []byte   // closed when the reply pipe closes: the helper exited
	exited  chan struct{} // closed once the process is waited for
	waitErr error         // set before exited closes
	log     *logTail      // its stdout and stderr (Spark's log, the JVM's)
}

func startSparkServer(env []string) (*sparkServer, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, &SparkError{Err: err}
	}
	defer w.Close() // the child holds its copy
	cmd := exec.Command(SparkPython(), SparkScript(), "--serve", "--reply-fd", "3")
	cmd.ExtraFiles = []*os.File{w} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = sparkEnv(env)
	log := &logTail{}
	cmd.Stdout, cmd.Stderr = log, log
	stdin, err := cmd.StdinPipe()
	if err != nil {
		r.Close()
		return nil, &SparkError{Err: err}
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		return nil, &SparkError{Err: fmt.Errorf("start %s: %w", SparkScript(), err)}
	}
	s := &sparkServer{cmd: cmd, stdin: stdin, replies: make(chan []byte), exited: make(chan struct{}), log: log}
	go s.readReplies(r)
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

func (s *sparkServer) readReplies(r *os.File) {
	defer close(s.replies)
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			s.replies <- line
		}
		if err != nil {
			return
		}
	}
}

// query sends one request and waits for its reply, the helper's exit or
// the end of ctx, which kills the helper.
func (s *sparkServer) query(ctx context.Context, queries []string) ([]Rows, error) {
	req, err := json.Marshal(map[string][]string{"queries": queries})
	if err != nil {
		return nil, &SparkError{Err: err}
	}
	if _, err := s.stdin.Write(append(req, '\n')); err != nil {
		s.kill()
		return nil, &SparkError{Err: fmt.Errorf("send the queries: %w (helper: %v)", err, s.exitErr()), Stderr: s.log.tail()}
	}
	select {
	case line, ok := <-s.replies:
		if !ok {
			s.waitExit(15 * time.Second)
			return nil, &SparkError{Err: fmt.Errorf("helper exited without replying: %v", s.exitErr()), Stderr: s.log.tail()}
		}
		return parseSparkReply(line, queries, s.log)
	case <-ctx.Done():
		s.kill()
		return nil, &SparkError{Err: fmt.Errorf("no reply within %v: %w", SparkTimeout, ctx.Err()), Stderr: s.log.tail()}
	}
}

func parseSparkReply(line []byte, queries []string, log *logTail) ([]Rows, error) {
	var out sparkOutput
	if err := json.Unmarshal(line, &out); err != nil {
		return nil, &SparkError{Err: fmt.Errorf("reply %.200q: %w", line, err), Stderr: log.tail()}
	}
	if out.Error != "" {
		q := ""
		if out.QueryIndex >= 0 && out.QueryIndex < len(queries) {
			q = queries[out.QueryIndex]
		}
		return nil, &SparkError{Query: q, Err: errors.New(out.Error), Stderr: log.tail()}
	}
	return out.Results, nil
}

// close ends the helper as it is meant to end (stdin closed: the session
// stops, the JVM exits), killing it if that takes too long.
func (s *sparkServer) close() {
	s.stdin.Close()
	if !s.waitExit(30 * time.Second) {
		s.kill()
	}
}

// kill ends the helper's process group (pyspark's JVM with it) at once.
func (s *sparkServer) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.stdin.Close()
	s.waitExit(15 * time.Second)
}

func (s *sparkServer) waitExit(d time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(d):
		return false
	}
}

func (s *sparkServer) exitedNow() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

func (s *sparkServer) exitErr() error {
	if !s.exitedNow() {
		return errors.New("still running")
	}
	if s.waitErr == nil {
		return errors.New("exit status 0")
	}
	return s.waitErr
}

// logTail keeps the end of what a long-running helper writes, for errors.
type logTail struct {
	mu sync.Mutex
	b  []byte
}

func (l *logTail) Write(p []byte) (int, error) {
	const keep = 16 << 10
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if len(l.b) > 4*keep {
		l.b = append([]byte(nil), l.b[len(l.b)-keep:]...)
	}
	return len(p), nil
}

func (l *logTail) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tail(l.b)
}

// closeAll stops every session as it is meant to stop; tests that install a
// fake helper call it when they end.
func (p *sparkPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, s := range p.sessions {
		s.mu.Lock()
		if s.srv != nil {
			s.srv.close()
		}
		s.srv, s.served = nil, 0
		s.mu.Unlock()
		delete(p.sessions, key)
	}
}
