package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Daemon is one hdfs-sink process run by the harness, in the daemon's
// network namespace when there is one.
type Daemon struct {
	Pid  int
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	url  string // GET /status, found in the log
}

// StartDaemon runs `hdfs-sink run --config config` with its output in
// logPath. statusHost is where the status endpoint listens (the daemon's
// veth address, so the harness reaches it from its own namespace).
func StartDaemon(bin, config, logPath string, ns *Netns, statusHost string, env ...string) (*Daemon, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// Read-only: the harness only reads /status, from another network
	// namespace, and an address other hosts reach needs it (or auth).
	argv := []string{bin, "run", "--config", config, "--status-addr", statusHost + ":0", "--read-only"}
	if ns != nil {
		argv = ns.Exec(argv...) // ip netns exec execs the daemon: same pid
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	d := &Daemon{Pid: cmd.Process.Pid, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); logf.Close(); close(d.done) }()
	return d, d.waitStatus(30 * time.Second)
}

var statusURL = regexp.MustCompile(`url=(http://\S+/status)`)

// waitStatus waits for the status endpoint's line in the log. The log is
// appended to across restarts, so only lines after the last "connector
// starting" of this pid count; the url is the last one logged.
func (d *Daemon) waitStatus(within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if !d.Alive() {
			return fmt.Errorf("hdfs-sink exited at start: %v\n%s", d.err, TailFile(d.Log, 20))
		}
		b, _ := os.ReadFile(d.Log)
		if m := statusURL.FindAllSubmatch(b, -1); len(m) > 0 {
			u := string(m[len(m)-1][1])
			if _, err := d.getStatus(u); err == nil {
				d.url = u
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("hdfs-sink logged no status endpoint within %v", within)
}

// Alive reports whether the process is still running.
func (d *Daemon) Alive() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// Stopped reports whether the process is stopped (by SIGSTOP): state T
// in /proc/<pid>/stat.
func (d *Daemon) Stopped() bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.Pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, so look after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'T'
}

// Signal sends sig to the daemon.
func (d *Daemon) Signal(sig syscall.Signal) error { return d.cmd.Process.Signal(sig) }

// Wait waits up to within for the process to exit and returns its error.
func (d *Daemon) Wait(within time.Duration) (error, bool) {
	select {
	case <-d.done:
		return d.err, true
	case <-time.After(within):
		return nil, false
	}
}

// Stop sends SIGTERM and waits for a clean exit.
func (d *Daemon) Stop(within time.Duration) error {
	if !d.Alive() {
		return fmt.Errorf("hdfs-sink had already exited: %v", d.err)
	}
	_ = d.Signal(syscall.SIGTERM)
	err, ok := d.Wait(within)
	if !ok {
		_ = d.Signal(syscall.SIGKILL)
		<-d.done
		return fmt.Errorf("hdfs-sink did not exit within %v of SIGTERM", within)
	}
	if err != nil {
		return fmt.Errorf("hdfs-sink exit after SIGTERM: %v", err)
	}
	return nil
}

// Kill sends SIGKILL and waits.
func (d *Daemon) Kill() {
	_ = d.Signal(syscall.SIGCONT)
	_ = d.Signal(syscall.SIGKILL)
	<-d.done
}

// Status is the part of GET /status the harness reads.
type Status struct {
	Connectors []ConnStatus `json:"connectors"`
	Process    *struct {
		Goroutines int `json:"goroutines"`
	} `json:"process"`
}

// ConnStatus is one connector in GET /status.
type ConnStatus struct {
	Name       string           `json:"name"`
	State      string           `json:"state"`
	Error      string           `json:"error"`
	Counters   map[string]int64 `json:"counters"`
	Partitions *struct {
		Assigned int               `json:"assigned"`
		Broken   int               `json:"broken"`
		Errors   map[string]string `json:"errors"`
	} `json:"partitions"`
	Hive *struct {
		Pending        int     `json:"pending"`
		PendingSeconds float64 `json:"pending_seconds"`
		LastError      string  `json:"last_error"`
	} `json:"hive"`
	Kafka    *downStatus `json:"kafka"`
	Registry *downStatus `json:"registry"`
}

type downStatus struct {
	Error          string  `json:"error"`
	FailingSeconds float64 `json:"failing_seconds"`
}

// Status fetches GET /status.
func (d *Daemon) Status() (Status, error) { return d.getStatus(d.url) }

func (d *Daemon) getStatus(url string) (Status, error) {
	var st Status
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// Problems is what the status document says is wrong, "" when nothing.
func (s Status) Problems() string {
	var out []string
	for _, c := range s.Connectors {
		if c.Error != "" {
			out = append(out, c.Name+": "+c.Error)
		}
		if c.Partitions != nil && c.Partitions.Broken > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d partitions broken: %s", c.Name, c.Partitions.Broken, c.Partitions.Assigned, firstValue(c.Partitions.Errors)))
		}
		for what, d := range map[string]*downStatus{"kafka": c.Kafka, "registry": c.Registry} {
			if d != nil {
				out = append(out, fmt.Sprintf("%s: %s failing for %.0fs: %s", c.Name, what, d.FailingSeconds, d.Error))
			}
		}
		// Metastore work waits off the write path; its age is the signal,
		// before the first call even times out.
		if c.Hive != nil && (c.Hive.LastError != "" || c.Hive.PendingSeconds > 10) {
			out = append(out, fmt.Sprintf("%s: hive: %d pending for %.0fs: %s", c.Name, c.Hive.Pending, c.Hive.PendingSeconds, c.Hive.LastError))
		}
	}
	return strings.Join(out, "; ")
}

func firstValue(m map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		return k + ": " + m[k]
	}
	return ""
}

// Sample is the daemon's resource use at one moment.
type Sample struct {
	At         time.Time      `json:"at"`
	RSSBytes   int64          `json:"rss_bytes"`
	FDs        int            `json:"fds"`
	Threads    int            `json:"threads"`
	Goroutines int            `json:"goroutines"`
	Conns      map[string]int `json:"conns"` // "<service> <state>" → sockets the daemon holds
}

// Sample reads /proc and GET /status; ports names the services by port.
func (d *Daemon) Sample(ports map[int]string) Sample {
	s := Sample{At: time.Now(), Conns: map[string]int{}}
	st := procStatus(d.Pid)
	s.RSSBytes = st["VmRSS"] * 1024
	s.Threads = int(st["Threads"])
	inodes := socketInodes(d.Pid, &s.FDs)
	for _, c := range tcpSockets(d.Pid) {
		if svc, ok := ports[c.remPort]; ok && inodes[c.inode] {
			s.Conns[svc+" "+c.state]++
		}
	}
	if doc, err := d.Status(); err == nil && doc.Process != nil {
		s.Goroutines = doc.Process.Goroutines
	}
	return s
}

// procStatus reads the numeric fields of /proc/<pid>/status (kB for sizes).
func procStatus(pid int) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if f := strings.Fields(v); ok && len(f) > 0 {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out
}

// socketInodes counts the open descriptors and returns the socket inodes.
func socketInodes(pid int, fds *int) map[string]bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	*fds = len(ents)
	out := map[string]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return out
}

type tcpSocket struct {
	remPort int
	state   string
	inode   string
}

// tcpStates names the states of /proc/net/tcp.
var tcpStates = map[string]string{"01": "established", "02": "syn_sent", "03": "syn_recv", "04": "fin_wait1",
	"05": "fin_wait2", "06": "time_wait", "07": "close", "08": "close_wait", "09": "last_ack", "0A": "listen", "0B": "closing"}

// tcpSockets lists the TCP sockets of the daemon's network namespace.
func tcpSockets(pid int) []tcpSocket {
	var out []tcpSocket
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fl := strings.Fields(line)
			if len(fl) < 10 {
				continue
			}
			_, portHex, _ := strings.Cut(fl[2], ":")
			port, _ := strconv.ParseInt(portHex, 16, 32)
			out = append(out, tcpSocket{remPort: int(port), state: tcpStates[fl[3]], inode: fl[9]})
		}
	}
	return out
}

// TailFile is the last n lines of a file.
func TailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	return lastLines(string(b), n)
}

// LogSince is what the daemon logged after byte offset off, and the new end.
func LogSince(path string, off int64) (string, int64) {
	b, _ := os.ReadFile(path)
	if off > int64(len(b)) {
		off = 0
	}
	return string(b[off:]), int64(len(b))
}

// countLines counts lines of s containing sub.
func countLines(s, sub string) int {
	return bytes.Count([]byte(s), []byte(sub))
}
