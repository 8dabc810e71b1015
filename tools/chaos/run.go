package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// Options configure a run of the fault catalogue.
type Options struct {
	Config Config
	Bin    string // the hdfs-sink binary under test
	Dir    string // local directory for connector files, daemon logs and results
	Faults []string
	// Hold is how long each fault lasts (faults that must outlast a
	// timeout hold longer).
	Hold time.Duration
	// RecoverWithin is the correctness bound: a daemon that has not caught
	// up this long after the service returned has not recovered.
	RecoverWithin time.Duration
	Rate          int // records per second
	Partitions    int32
	// RetryBackoffMs is the connectors' retry.backoff.ms (the reference's
	// default, 5000, unless set).
	RetryBackoffMs int
	// Steady is how long traffic flows before a fault (default 10 s).
	Steady time.Duration
	Logf   func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.Hold <= 0 {
		o.Hold = 30 * time.Second
	}
	if o.RecoverWithin <= 0 {
		o.RecoverWithin = 5 * time.Minute
	}
	if o.Rate <= 0 {
		o.Rate = 200
	}
	if o.Partitions <= 0 {
		o.Partitions = 4
	}
	if o.RetryBackoffMs <= 0 {
		o.RetryBackoffMs = 5000
	}
	if o.Steady <= 0 {
		o.Steady = 10 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// Result is one fault's outcome.
type Result struct {
	Fault string `json:"fault"`
	What  string `json:"what"`
	// Outcome is "pass", "FAIL: …" or "not run: …".
	Outcome       string  `json:"outcome"`
	Records       int64   `json:"records"`
	Files         int     `json:"files"`
	OutageSeconds float64 `json:"outage_seconds"`
	// RecoverySeconds runs from the service's return to the daemon having
	// committed every record produced before it (or, for a metastore
	// fault, to the metastore work being done), without a restart.
	RecoverySeconds float64 `json:"recovery_seconds"`
	// Reported is the first thing GET /status said was wrong during the
	// fault, else the first error the daemon logged.
	Reported   string `json:"reported"`
	ErrorLines int    `json:"error_lines"`
	Log        string `json:"log"`
	// Before and After are the daemon's goroutines and descriptors just
	// before the fault and once it had recovered: a leak shows as growth.
	Before Resources `json:"before"`
	After  Resources `json:"after"`
}

// Resources are what a leak would grow.
type Resources struct {
	Goroutines int `json:"goroutines"`
	FDs        int `json:"fds"`
}

func (r *faultRun) resources() Resources {
	s := r.daemon.Sample(nil)
	return Resources{Goroutines: s.Goroutines, FDs: s.FDs}
}

// Passed reports whether the fault was run and passed.
func (r Result) Passed() bool { return r.Outcome == "pass" }

// Harness is what the faults and the soak share: the config, the actions,
// the daemon's namespace and a store client for the checks.
type Harness struct {
	opts  Options
	ctl   *Control
	ns    *Netns
	store *hdfs.FS
	// haStore reads the HA nameservice, opened by the first HA fault.
	haStore *hdfs.FS
	bin     []byte // the daemon's binary, read by the first binaryHas
	runID   string
	n       int
	mu      sync.Mutex
}

// NewHarness connects to HDFS and sets up the daemon's namespace.
func NewHarness(opts Options) (*Harness, error) {
	opts.defaults()
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	h := &Harness{opts: opts, ctl: NewControl(opts.Config, root), runID: time.Now().UTC().Format("20060102t150405")}
	h.store, err = hdfs.New(hdfs.Options{URL: "hdfs://" + opts.Config.NameNode, User: opts.Config.HDFSUser})
	if err != nil {
		return nil, err
	}
	if opts.Config.Netns != "none" {
		h.ns = NewNetns(opts.Config.Netns, opts.Config.Loopback())
		if err := h.ns.Create(); err != nil {
			h.store.Close()
			return nil, fmt.Errorf("daemon network namespace: %w", err)
		}
	}
	return h, nil
}

// Close removes the namespace and closes the store client.
func (h *Harness) Close() {
	if h.ns != nil {
		h.ns.Delete()
	}
	h.store.Close()
	if h.haStore != nil {
		h.haStore.Close()
	}
}

// binaryHas reports whether the daemon under test knows the environment
// switch name: a release build has none of the fault-injection ones.
func (h *Harness) binaryHas(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bin == nil {
		h.bin, _ = os.ReadFile(h.opts.Bin)
	}
	return bytes.Contains(h.bin, []byte(name))
}

// haFS is a store client of the HA nameservice, opened once.
func (h *Harness) haFS() (*hdfs.FS, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.haStore != nil {
		return h.haStore, nil
	}
	ha := h.opts.Config.HA
	fs, err := hdfs.New(hdfs.Options{URL: "hdfs://" + ha.Nameservice, ConfDir: ha.ConfDir, User: h.opts.Config.HDFSUser})
	if err != nil {
		return nil, fmt.Errorf("HA nameservice %s (hadoop.conf.dir %s): %w", ha.Nameservice, ha.ConfDir, err)
	}
	h.haStore = fs
	return fs, nil
}

func (h *Harness) serial() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	return h.n
}

// RunFaults runs the selected faults one after the other, each with its
// own topic, directory and daemon, and writes results.json into Dir.
func (h *Harness) RunFaults(ctx context.Context) ([]Result, error) {
	var out []Result
	for _, f := range Catalogue() {
		if len(h.opts.Faults) > 0 && !slices.Contains(h.opts.Faults, f.Name) {
			continue
		}
		h.opts.Logf("fault %s: %s", f.Name, f.What)
		res := h.runFault(ctx, f)
		h.opts.Logf("fault %s: %s (outage %.0fs, recovered %.1fs after the service returned; reported: %s)",
			f.Name, res.Outcome, res.OutageSeconds, res.RecoverySeconds, res.Reported)
		out = append(out, res)
		if err := writeJSON(filepath.Join(h.opts.Dir, "results.json"), out); err != nil {
			return out, err
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

func writeJSON(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// faultRun is one fault's topic, traffic, daemon and directories.
type faultRun struct {
	*Harness
	cfg     Config
	f       Fault
	fs      *hdfs.FS // the store the fault's connector writes: Harness.store, or haStore
	topic   string
	base    string // HDFS directory of the run: topics/ and logs/ below
	db      string
	traffic *Traffic
	daemon  *Daemon
	conf    string
	res     Result
	// struck is when the fault struck, if Inject knows better than its
	// own start (a freeze it waited for); the outage counts from it.
	struck time.Time
}

func (h *Harness) runFault(ctx context.Context, f Fault) Result {
	r := &faultRun{Harness: h, cfg: h.opts.Config, f: f, res: Result{Fault: f.Name, What: f.What}}
	if why := r.cannotRun(); why != "" {
		r.res.Outcome = "not run: " + why
		return r.res
	}
	name := strings.ReplaceAll(f.Name, "-", "_")
	r.topic = fmt.Sprintf("chaos-%s-%s", h.runID, f.Name)
	r.base = path.Join(h.opts.Config.BaseDir, h.runID, f.Name)
	r.db = "chaos_" + h.runID + "_" + name
	r.fs = h.store
	if f.HA {
		var err error
		if r.fs, err = h.haFS(); err != nil {
			r.res.Outcome = "FAIL: " + err.Error()
			return r.res
		}
	}
	if err := r.run(ctx); err != nil {
		r.res.Outcome = "FAIL: " + err.Error()
	} else {
		r.res.Outcome = "pass"
	}
	r.cleanup()
	return r.res
}

func (r *faultRun) cannotRun() string {
	if r.f.Net && r.ns == nil {
		return "the daemon runs without a network namespace of its own"
	}
	if r.f.HA && r.cfg.HA.Nameservice == "" {
		return "no HA nameservice configured (ha.nameservice, ha.conf_dir)"
	}
	for _, e := range r.f.Env {
		if name, _, _ := strings.Cut(e, "="); !r.binaryHas(name) {
			return "the daemon under test has no " + name + " (a release build: build it with -tags faults)"
		}
	}
	for _, a := range r.f.Needs {
		if !r.ctl.Has(a) {
			return "no command for " + a
		}
	}
	return ""
}

func (r *faultRun) cleanup() {
	if r.daemon != nil && r.daemon.Alive() {
		r.daemon.Kill()
	}
	if r.traffic != nil {
		r.traffic.Close()
	}
}

// run is one fault from start to the exactly-once check.
func (r *faultRun) run(ctx context.Context) error {
	if err := r.start(ctx); err != nil {
		return err
	}
	time.Sleep(r.opts.Steady) // steady state before the fault
	r.res.Before = r.resources()
	healedAt, err := r.inject(ctx)
	if err != nil {
		return err
	}
	if err := r.awaitRecovery(ctx, healedAt); err != nil {
		return err
	}
	if r.f.Restore != nil {
		if err := r.f.Restore(ctx, r); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	time.Sleep(5 * time.Second) // traffic goes on after the recovery
	r.res.After = r.resources()
	return r.finish(ctx)
}

// start begins traffic and the daemon, and waits for its first commit.
func (r *faultRun) start(ctx context.Context) error {
	var err error
	rate := r.opts.Rate
	if r.f.Rate > 0 {
		rate = r.f.Rate
	}
	if r.traffic, err = NewTraffic(ctx, r.cfg, r.topic, r.opts.Partitions, rate); err != nil {
		return err
	}
	r.traffic.Start()
	if r.conf, err = r.writeConnector(); err != nil {
		return err
	}
	r.res.Log = filepath.Join(r.opts.Dir, r.f.Name+".log")
	if r.daemon, err = r.startDaemon(r.conf, r.res.Log, r.f.Env...); err != nil {
		return err
	}
	return r.waitCommitted(ctx, 1, 2*time.Minute)
}

func (h *Harness) startDaemon(conf, logFile string, env ...string) (*Daemon, error) {
	host := "127.0.0.1"
	if h.ns != nil {
		host = h.ns.DaemonIP
	}
	return StartDaemon(h.opts.Bin, conf, logFile, h.ns, host, env...)
}

// inject runs the fault, watching what the daemon says meanwhile, and
// returns the moment the service was back.
func (r *faultRun) inject(ctx context.Context) (time.Time, error) {
	logOff := fileSize(r.res.Log)
	w := r.watch()
	start := time.Now()
	if err := r.f.Inject(ctx, r); err != nil {
		w.stop()
		return time.Time{}, fmt.Errorf("inject: %w", err)
	}
	hold := r.f.Hold
	if hold == 0 {
		hold = r.opts.Hold
	}
	if hold > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(hold):
		}
	}
	var healErr error
	if r.f.Heal != nil {
		healErr = r.f.Heal(context.WithoutCancel(ctx), r)
	}
	healed := time.Now()
	w.stop()
	if !r.struck.IsZero() {
		start = r.struck
	}
	r.res.OutageSeconds = healed.Sub(start).Seconds()
	said, _ := LogSince(r.res.Log, logOff)
	r.res.ErrorLines = countLines(said, "level=ERROR")
	r.res.Reported = w.first
	if r.res.Reported == "" {
		r.res.Reported = firstLine(said, "level=ERROR")
	}
	if healErr != nil {
		return healed, fmt.Errorf("heal: %w", healErr)
	}
	if r.res.Reported == "" && !r.f.Quiet {
		return healed, errors.New("the daemon said nothing (no error in GET /status, none logged) while the service was down")
	}
	return healed, nil
}

// watcher polls GET /status while a fault lasts and keeps the first
// problem it shows.
type watcher struct {
	first string
	quit  chan struct{}
	done  chan struct{}
}

func (r *faultRun) watch() *watcher {
	w := &watcher{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			if st, err := r.daemon.Status(); err == nil && w.first == "" {
				w.first = st.Problems()
			}
			select {
			case <-w.quit:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return w
}

func (w *watcher) stop() { close(w.quit); <-w.done }

func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return truncate(l, 400)
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// awaitRecovery waits until the daemon, still the same process, has
// committed everything produced before the service returned and at least
// one record produced after (for a metastore fault: until its metastore
// work is done). "One after" matters for a broker outage, when producing
// stalls too: everything produced before it may be committed already.
func (r *faultRun) awaitRecovery(ctx context.Context, healed time.Time) error {
	want := Total(r.traffic.Counts()) + 1
	deadline := healed.Add(r.opts.RecoverWithin)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !r.daemon.Alive() {
			return fmt.Errorf("hdfs-sink exited during or after the fault: %v\n%s", r.daemon.err, TailFile(r.res.Log, 15))
		}
		if r.caughtUp(ctx, want) {
			r.res.RecoverySeconds = time.Since(healed).Seconds()
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	st, _ := r.daemon.Status()
	return fmt.Errorf("not recovered %v after the service returned (status: %s)\n%s", r.opts.RecoverWithin, st.Problems(), TailFile(r.res.Log, 15))
}

func (r *faultRun) caughtUp(ctx context.Context, want int64) bool {
	if r.f.Hive {
		st, err := r.daemon.Status()
		return err == nil && len(st.Connectors) == 1 && st.Connectors[0].Hive != nil &&
			st.Connectors[0].Hive.Pending == 0 && st.Connectors[0].Hive.LastError == ""
	}
	n, err := verify.CountByNames(ctx, r.fs, r.topicsDir(), r.topic)
	return err == nil && n >= want
}

// finish stops traffic, lets the daemon commit the rest, stops it and
// checks every offset is on HDFS exactly once and registered in Hive.
func (r *faultRun) finish(ctx context.Context) error {
	r.traffic.Stop()
	if err := r.traffic.Err(); err != nil {
		return fmt.Errorf("traffic: %w", err)
	}
	counts := r.traffic.Counts()
	if err := r.waitCommitted(ctx, Total(counts), 3*time.Minute); err != nil {
		return err
	}
	if err := r.daemon.Stop(90 * time.Second); err != nil {
		return err
	}
	rep, err := verify.Check(ctx, r.fs, verify.Options{TopicsDir: r.topicsDir(), Topic: r.topic, Want: counts, SeqField: "seq"})
	r.res.Records, r.res.Files = rep.Records, len(rep.Files)
	if err != nil {
		return fmt.Errorf("exactly-once violated: %w", err)
	}
	return r.checkHive(ctx)
}

// waitCommitted waits until committed file names cover n records.
func (r *faultRun) waitCommitted(ctx context.Context, n int64, within time.Duration) error {
	deadline := time.Now().Add(within)
	var got int64
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var err error
		if got, err = verify.CountByNames(ctx, r.fs, r.topicsDir(), r.topic); err == nil && got >= n {
			return nil
		}
		if !r.daemon.Alive() {
			return fmt.Errorf("hdfs-sink exited: %v\n%s", r.daemon.err, TailFile(r.res.Log, 15))
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("after %v committed files hold %d records, want %d\n%s", within, got, n, TailFile(r.res.Log, 15))
}

// checkHive: every Kafka partition is a registered Hive partition.
func (r *faultRun) checkHive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cl, err := hive.Dial(ctx, r.cfg.Metastore)
	if err != nil {
		return fmt.Errorf("metastore: %w", err)
	}
	defer cl.Close()
	names, err := cl.ListPartitionNames(ctx, r.db, hive.TableName("${topic}", r.topic))
	if err != nil {
		return fmt.Errorf("metastore: list partitions: %w", err)
	}
	if len(names) != int(r.opts.Partitions) {
		return fmt.Errorf("hive partitions %v, want one per Kafka partition (%d)", names, r.opts.Partitions)
	}
	return nil
}

var _ storage.FS = (*hdfs.FS)(nil)
