package chaos

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
)

// SoakOptions configure a soak: steady traffic for Duration, a fault of
// the rotation every FaultEvery, a SIGKILL of the daemon every KillEvery,
// the daemon's resources sampled every SampleEvery.
type SoakOptions struct {
	Duration, FaultEvery, KillEvery, SampleEvery time.Duration
	// Faults are the rotation (default SoakFaults); each holds Hold.
	Faults []string
	Hold   time.Duration
	// Speedup is how much faster record time runs than the wall clock:
	// with the hourly partitioner, 60 opens a new hour directory (and Hive
	// partition) every minute.
	Speedup int
}

// SoakFaults are the faults a soak cycles through: each service goes
// down, hangs or is cut off in turn.
var SoakFaults = []string{
	"namenode-sigkill", "partition-hms", "datanode-sigkill", "kafka-sigkill", "registry-sigstop",
	"partition-namenode", "hms-sigkill", "namenode-safemode", "kafka-sigstop", "partition-kafka",
	"namenode-sigstop", "partition-datanode", "quota-space", "registry-sigkill",
}

func (o *SoakOptions) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Duration, 2*time.Hour)
	def(&o.FaultEvery, 4*time.Minute)
	def(&o.KillEvery, 30*time.Minute)
	def(&o.SampleEvery, 15*time.Second)
	def(&o.Hold, 30*time.Second)
	if len(o.Faults) == 0 {
		o.Faults = SoakFaults
	}
	if o.Speedup <= 0 {
		o.Speedup = 60
	}
}

// Event is something the soak did to the daemon or a service.
type Event struct {
	At       float64 `json:"at_seconds"` // since the soak started
	Kind     string  `json:"kind"`       // "fault" or "kill"
	Name     string  `json:"name"`
	Outage   float64 `json:"outage_seconds"`
	Recovery float64 `json:"recovery_seconds"`
	Outcome  string  `json:"outcome"`
}

// SoakSummary is the soak's outcome (summary.json).
type SoakSummary struct {
	Started, Ended time.Time
	Records        int64
	Files          int
	ExactlyOnce    string // "ok" or the violation
	HivePartitions int
	HourDirs       int
	Events         []Event
	Lifetimes      []Lifetime
}

// soak is the state of one soak run.
type soak struct {
	*faultRun
	so      SoakOptions
	t0      time.Time
	mu      sync.Mutex // guards daemon (the sampler reads it)
	samples *csv.Writer
	sfile   *os.File
	sum     SoakSummary
	faults  map[string]Fault
}

// Soak runs a soak and writes samples.csv, events.json and summary.json
// into Dir.
func (h *Harness) Soak(ctx context.Context, so SoakOptions) (SoakSummary, error) {
	so.defaults()
	s := &soak{so: so, faults: map[string]Fault{}}
	for _, f := range Catalogue() {
		s.faults[f.Name] = f
	}
	s.faultRun = &faultRun{Harness: h, cfg: h.opts.Config, f: Fault{Name: "soak"}, fs: h.store}
	s.topic = "soak-" + h.runID
	s.base = path.Join(h.opts.Config.BaseDir, h.runID, "soak")
	s.db = "soak_" + h.runID
	defer s.cleanup()
	if err := s.begin(ctx); err != nil {
		return s.sum, err
	}
	stopSampler := s.sampleEvery(so.SampleEvery)
	err := s.loop(ctx)
	stopSampler()
	s.sfile.Close()
	if err == nil {
		err = s.end(ctx)
	}
	s.sum.Lifetimes = Lifetimes(filepath.Join(h.opts.Dir, "samples.csv"))
	s.sum.Ended = time.Now()
	if werr := writeJSON(filepath.Join(h.opts.Dir, "summary.json"), s.sum); err == nil {
		err = werr
	}
	return s.sum, err
}

func (s *soak) begin(ctx context.Context) error {
	var err error
	if s.sfile, err = os.Create(filepath.Join(s.opts.Dir, "samples.csv")); err != nil {
		return err
	}
	s.samples = csv.NewWriter(s.sfile)
	s.samples.Write(sampleHeader)
	if s.traffic, err = NewTraffic(ctx, s.cfg, s.topic, s.opts.Partitions, s.opts.Rate); err != nil {
		return err
	}
	s.traffic.Speedup = s.so.Speedup
	s.t0, s.sum.Started = time.Now(), time.Now()
	s.traffic.Start()
	if s.conf, err = writeConnectorFile(s.opts.Dir, "soak", s.soakConnector()); err != nil {
		return err
	}
	s.res.Log = filepath.Join(s.opts.Dir, "soak.log")
	if err := s.restart(); err != nil {
		return err
	}
	return s.waitCommitted(ctx, 1, 2*time.Minute)
}

// soakConnector rotates often, by count and time, into hour directories
// of the records' created_at: with Speedup, a new Hive partition every
// minute or so.
func (s *soak) soakConnector() map[string]string {
	c := s.connectorConfig()
	c["flush.size"] = "3000"
	c["rotate.interval.ms"] = "10000"
	c["partitioner.class"] = "io.confluent.connect.storage.partitioner.HourlyPartitioner"
	c["timestamp.extractor"], c["timestamp.field"] = "RecordField", "created_at"
	c["timezone"], c["locale"] = "UTC", "en-US"
	return c
}

// restart starts a daemon (the first, or one after a SIGKILL).
func (s *soak) restart() error {
	d, err := s.startDaemon(s.conf, s.res.Log)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.daemon = d
	s.mu.Unlock()
	return nil
}

// loop runs faults and kills on their schedules until Duration is over.
func (s *soak) loop(ctx context.Context) error {
	end := s.t0.Add(s.so.Duration)
	nextFault, nextKill := s.t0.Add(s.so.FaultEvery), s.t0.Add(s.so.KillEvery)
	for i := 0; ctx.Err() == nil && time.Now().Before(end); {
		switch now := time.Now(); {
		case !now.Before(nextKill):
			if err := s.kill(ctx); err != nil {
				return err
			}
			nextKill = nextKill.Add(s.so.KillEvery)
		case !now.Before(nextFault):
			if err := s.fault(ctx, s.so.Faults[i%len(s.so.Faults)]); err != nil {
				return err
			}
			i++
			nextFault = nextFault.Add(s.so.FaultEvery)
		default:
			if err := s.healthy(); err != nil {
				return err
			}
			time.Sleep(time.Second)
		}
	}
	return ctx.Err()
}

// healthy fails the soak if the daemon died or the traffic stopped.
func (s *soak) healthy() error {
	if !s.daemon.Alive() {
		return fmt.Errorf("hdfs-sink exited: %v\n%s", s.daemon.err, TailFile(s.res.Log, 20))
	}
	return s.traffic.Err()
}

func (s *soak) since() float64 { return time.Since(s.t0).Seconds() }

// kill SIGKILLs the daemon, starts another at once and waits until it has
// caught up.
func (s *soak) kill(ctx context.Context) error {
	ev := Event{At: s.since(), Kind: "kill", Name: "hdfs-sink SIGKILL"}
	s.daemon.Kill()
	restarted := time.Now()
	if err := s.restart(); err != nil {
		return err
	}
	s.res.RecoverySeconds = 0
	err := s.awaitRecovery(ctx, restarted)
	ev.Recovery, ev.Outcome = s.res.RecoverySeconds, outcome(err)
	s.record(ev)
	return s.healthy()
}

// fault runs one fault of the rotation and waits for the recovery.
func (s *soak) fault(ctx context.Context, name string) error {
	f, ok := s.faults[name]
	if !ok {
		return fmt.Errorf("soak: unknown fault %q", name)
	}
	if f.HA || len(f.Env) > 0 {
		// The soak's one daemon writes the plain HDFS, with no switch.
		return fmt.Errorf("soak: fault %q needs a connector and daemon of its own (run it with chaos faults)", name)
	}
	ev := Event{At: s.since(), Kind: "fault", Name: name}
	if f.Hold <= 0 {
		f.Hold = s.so.Hold
	}
	s.f = f
	defer func() { s.f = Fault{Name: "soak"} }()
	if why := s.cannotRun(); why != "" {
		ev.Outcome = "not run: " + why
		s.record(ev)
		return nil
	}
	s.res.OutageSeconds, s.res.RecoverySeconds = 0, 0
	healed, err := s.inject(ctx)
	if err == nil {
		err = s.awaitRecovery(ctx, healed)
	}
	ev.Outage, ev.Recovery, ev.Outcome = s.res.OutageSeconds, s.res.RecoverySeconds, outcome(err)
	s.record(ev)
	// A fault that failed is in the record; the soak goes on unless the
	// daemon is gone (the exactly-once check at the end has the last word).
	return s.healthy()
}

func outcome(err error) string {
	if err != nil {
		return "FAIL: " + err.Error()
	}
	return "pass"
}

func (s *soak) record(ev Event) {
	s.opts.Logf("soak %6.0fs: %s %s: %s (outage %.0fs, recovered after %.1fs)", ev.At, ev.Kind, ev.Name, truncate(ev.Outcome, 300), ev.Outage, ev.Recovery)
	s.sum.Events = append(s.sum.Events, ev)
	_ = writeJSON(filepath.Join(s.opts.Dir, "events.json"), s.sum.Events)
}

// end stops traffic, lets the last daemon commit everything, and checks
// exactly-once and the Hive partitions.
func (s *soak) end(ctx context.Context) error {
	s.traffic.Stop()
	if err := s.traffic.Err(); err != nil {
		return err
	}
	counts := s.traffic.Counts()
	if err := s.waitCommitted(ctx, Total(counts), 5*time.Minute); err != nil {
		return err
	}
	if err := s.daemon.Stop(2 * time.Minute); err != nil {
		return err
	}
	rep, err := verify.Check(ctx, s.store, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: counts, SeqField: "seq"})
	s.sum.Records, s.sum.Files, s.sum.ExactlyOnce = rep.Records, len(rep.Files), "ok"
	if err != nil {
		s.sum.ExactlyOnce = err.Error()
		return fmt.Errorf("exactly-once violated: %w", err)
	}
	return s.checkHourPartitions(ctx, rep)
}

// checkHourPartitions: every hour directory holding committed files is a
// Hive partition.
func (s *soak) checkHourPartitions(ctx context.Context, rep verify.Report) error {
	dirs := map[string]bool{}
	for _, f := range rep.Files {
		dirs[path.Dir(f.Path)] = true
	}
	s.sum.HourDirs = len(dirs)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := hive.Dial(ctx, s.cfg.Metastore)
	if err != nil {
		return err
	}
	defer cl.Close()
	names, err := cl.ListPartitionNames(ctx, s.db, hive.TableName("${topic}", s.topic))
	s.sum.HivePartitions = len(names)
	if err == nil && len(names) != len(dirs) {
		err = fmt.Errorf("%d hive partitions for %d hour directories", len(names), len(dirs))
	}
	return err
}

var sampleServices = []string{"namenode", "datanode", "kafka", "hms", "registry"}

var sampleHeader = func() []string {
	h := []string{"elapsed_s", "pid", "rss_mb", "goroutines", "fds", "threads"}
	for _, svc := range sampleServices {
		h = append(h, svc+"_established", svc+"_other")
	}
	return h
}()

// sampleEvery samples the current daemon until the returned stop is called.
func (s *soak) sampleEvery(every time.Duration) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	ports := map[int]string{}
	for _, svc := range sampleServices {
		ports[s.cfg.Port(svc)] = svc
	}
	go func() {
		defer close(done)
		for {
			s.sampleOnce(ports)
			select {
			case <-quit:
				return
			case <-time.After(every):
			}
		}
	}()
	return func() { close(quit); <-done }
}

func (s *soak) sampleOnce(ports map[int]string) {
	s.mu.Lock()
	d := s.daemon
	s.mu.Unlock()
	if d == nil || !d.Alive() {
		return
	}
	smp := d.Sample(ports)
	row := []string{fmt.Sprintf("%.0f", smp.At.Sub(s.t0).Seconds()), strconv.Itoa(d.Pid),
		fmt.Sprintf("%.1f", float64(smp.RSSBytes)/(1<<20)), strconv.Itoa(smp.Goroutines), strconv.Itoa(smp.FDs), strconv.Itoa(smp.Threads)}
	for _, svc := range sampleServices {
		other := 0
		for k, n := range smp.Conns {
			if k != svc+" established" && len(k) > len(svc) && k[:len(svc)+1] == svc+" " {
				other += n
			}
		}
		row = append(row, strconv.Itoa(smp.Conns[svc+" established"]), strconv.Itoa(other))
	}
	s.samples.Write(row)
	s.samples.Flush()
}

// Lifetime sums up one daemon process's samples: the leak check compares
// the first and last quarter of each process's life.
type Lifetime struct {
	Pid            int
	From, To       float64 // elapsed seconds
	Samples        int
	Metrics        map[string]MetricSummary
	FirstQ, LastQ  map[string]float64 // median per metric over the first and last quarter
	LeakSuspicions []string
}

// MetricSummary is one metric over a lifetime.
type MetricSummary struct{ Min, Max, Last float64 }

// Lifetimes reads samples.csv and summarises it per process.
func Lifetimes(file string) []Lifetime {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		return nil
	}
	header, byPid, order := rows[0], map[int][][]float64{}, []int{}
	for _, r := range rows[1:] {
		pid, _ := strconv.Atoi(r[1])
		if _, seen := byPid[pid]; !seen {
			order = append(order, pid)
		}
		vals := make([]float64, len(r))
		for i, c := range r {
			vals[i], _ = strconv.ParseFloat(c, 64)
		}
		byPid[pid] = append(byPid[pid], vals)
	}
	var out []Lifetime
	for _, pid := range order {
		out = append(out, lifetime(pid, header, byPid[pid]))
	}
	return out
}

// leakMetrics are the columns judged for leaks, with the growth from the
// first to the last quarter of a lifetime that counts as suspicious.
var leakMetrics = map[string]float64{"rss_mb": 1.5, "goroutines": 1.25, "fds": 1.25, "namenode_established": 1.5,
	"namenode_other": 2, "hms_established": 2, "hms_other": 2, "datanode_other": 2}

func lifetime(pid int, header []string, rows [][]float64) Lifetime {
	lt := Lifetime{Pid: pid, From: rows[0][0], To: rows[len(rows)-1][0], Samples: len(rows),
		Metrics: map[string]MetricSummary{}, FirstQ: map[string]float64{}, LastQ: map[string]float64{}}
	q := max(1, len(rows)/4)
	for i, name := range header[2:] {
		col := make([]float64, len(rows))
		for j, r := range rows {
			col[j] = r[i+2]
		}
		lt.Metrics[name] = MetricSummary{Min: slices.Min(col), Max: slices.Max(col), Last: col[len(col)-1]}
		lt.FirstQ[name], lt.LastQ[name] = median(col[:q]), median(col[len(col)-q:])
		if factor, ok := leakMetrics[name]; ok && len(rows) >= 40 && lt.LastQ[name] > factor*max(lt.FirstQ[name], 2) {
			lt.LeakSuspicions = append(lt.LeakSuspicions, fmt.Sprintf("%s: median %.1f in the first quarter, %.1f in the last", name, lt.FirstQ[name], lt.LastQ[name]))
		}
	}
	sort.Strings(lt.LeakSuspicions)
	return lt
}

func median(v []float64) float64 {
	c := slices.Clone(v)
	slices.Sort(c)
	return c[len(c)/2]
}
