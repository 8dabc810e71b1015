package hive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Metastore is the part of *Client a Syncer uses. The Syncer closes every
// Metastore that SyncConfig.Connect hands it once it is done with it.
type Metastore interface {
	CreateDatabase(ctx context.Context, name, locationURI string) error
	CreateTable(ctx context.Context, t Table) error
	GetTable(ctx context.Context, db, name string) (*Table, error)
	AlterTable(ctx context.Context, t Table, cascade bool) error
	AddPartitions(ctx context.Context, db, table string, parts []Partition) error
	Close() error
}

var _ Metastore = (*Client)(nil)

// TopicTable says where a topic's table lives and how it is partitioned.
type TopicTable struct {
	Name          string   // the table, hive.table.name expanded and sanitised
	Location      string   // full URI of <topics.dir>/<topic>
	PartitionKeys []string // partitioner columns, all string
	// Values splits an encoded partition directory into PartitionKeys values.
	Values func(encoded string) ([]string, error)
	// ListDirs lists the encoded partition directories committed so far
	// (used once per process, after the table exists, to catch up on
	// partitions whose registration was pending when the process stopped),
	// under the syncer's context.
	ListDirs func(ctx context.Context) ([]string, error)
}

// SyncConfig configures a Syncer.
type SyncConfig struct {
	Database   string
	Format     Format
	Connect    func(ctx context.Context) (Metastore, error)
	Tables     func(topic string) TopicTable
	Backoff    time.Duration // first retry delay; doubles up to MaxBackoff
	MaxBackoff time.Duration
	Logger     *slog.Logger
}

// Syncer registers what the sink commits in the metastore, off the write
// path. HDFS writing never waits for it: work queues up while the metastore
// is down and is retried with backoff, reported with its age, and never
// dropped. Partitions are added only after their files are committed; on
// start, committed directories are synced so nothing pending is lost with a
// restart.
type Syncer struct {
	cfg      SyncConfig
	wake     chan struct{}
	failures atomic.Int64 // rounds that failed, for metrics

	mu      sync.Mutex
	schemas map[string]string          // topic → newest Avro schema seen
	ids     map[string]int32           // topic → its registry id
	applied map[string]string          // topic → schema the table has
	synced  map[string]bool            // topic → startup directory sync done
	parts   map[string]map[string]bool // topic → encoded dirs waiting
	since   time.Time                  // oldest pending work; zero when none
	lastErr error
}

// NewSyncer returns a Syncer; Run does the work.
func NewSyncer(cfg SyncConfig) *Syncer {
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Syncer{
		cfg: cfg, wake: make(chan struct{}, 1),
		schemas: map[string]string{}, ids: map[string]int32{}, applied: map[string]string{}, synced: map[string]bool{},
		parts: map[string]map[string]bool{},
	}
}

// SchemaSeen notes the writer schema of files being written for topic. The
// table is created, or altered with CASCADE, to match the newest schema (the
// highest registry id): files written with an older schema stay readable
// through Avro resolution, so the table never moves back.
func (s *Syncer) SchemaSeen(topic string, id int32, avroSchema string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.ids[topic]; ok && id <= old {
		return
	}
	s.schemas[topic], s.ids[topic] = avroSchema, id
	s.markPending()
}

// Committed notes encoded partition directories that now hold committed
// files: an owner's commit or one that recovery rolled forward, possibly
// before any SchemaSeen of the topic (tableReady says what happens then).
func (s *Syncer) Committed(topic string, encoded []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parts[topic] == nil {
		s.parts[topic] = map[string]bool{}
	}
	for _, e := range encoded {
		s.parts[topic][e] = true
	}
	s.markPending()
}

func (s *Syncer) markPending() {
	if s.since.IsZero() {
		s.since = time.Now()
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Pending reports how much work waits, since when, and the last error.
func (s *Syncer) Pending() (n int, since time.Time, lastErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for topic, sch := range s.schemas {
		if s.applied[topic] != sch || !s.synced[topic] {
			n++
		}
	}
	for _, dirs := range s.parts {
		n += len(dirs)
	}
	return n, s.since, s.lastErr
}

// Failures counts the rounds of metastore work that failed since start.
func (s *Syncer) Failures() int64 { return s.failures.Load() }

// Run works until ctx ends; the metastore connection it holds is closed
// before it returns.
func (s *Syncer) Run(ctx context.Context) {
	var ms Metastore
	defer s.drop(&ms)
	wait := s.cfg.Backoff
	for {
		err := s.round(ctx, &ms)
		s.recordRound(err)
		delay := time.Hour
		if err != nil {
			s.drop(&ms) // redial: the connection may be the problem
			delay, wait = wait, min(2*wait, s.cfg.MaxBackoff)
		} else {
			wait = s.cfg.Backoff
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-time.After(delay):
		}
	}
}

// Drain applies what is still pending once more, within timeout. The
// daemon calls it after Run has returned at shutdown: the files the sink
// committed on its way out are registered now, not at the next start.
func (s *Syncer) Drain(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var ms Metastore
	defer s.drop(&ms)
	err := s.round(ctx, &ms)
	s.recordRound(err)
	return err
}

// drop closes the connection *ms, if there is one, and forgets it. A close
// error changes nothing: the connection is not used again either way.
func (s *Syncer) drop(ms *Metastore) {
	if *ms == nil {
		return
	}
	if err := (*ms).Close(); err != nil {
		s.cfg.Logger.Debug("hive metastore connection closed with an error", "err", err)
	}
	*ms = nil
}

func (s *Syncer) recordRound(err error) {
	n, since, _ := s.Pending()
	s.mu.Lock()
	s.lastErr = err
	if n == 0 {
		s.since = time.Time{}
	}
	s.mu.Unlock()
	if err != nil {
		s.failures.Add(1)
		s.cfg.Logger.Error("hive metastore work pending; will retry", "pending", n, "pending_for", time.Since(since).Round(time.Second), "err", err)
	}
}

// round applies everything pending once; the first error stops it.
func (s *Syncer) round(ctx context.Context, ms *Metastore) error {
	if err := s.connect(ctx, ms); err != nil {
		return err
	}
	for _, topic := range s.topics() {
		if err := s.syncTopic(ctx, *ms, topic); err != nil {
			return err
		}
	}
	return nil
}

func (s *Syncer) connect(ctx context.Context, ms *Metastore) error {
	if *ms != nil {
		return nil
	}
	n, _, _ := s.Pending()
	if n == 0 {
		return nil
	}
	m, err := s.cfg.Connect(ctx)
	if err != nil {
		return err
	}
	*ms = m // from here on the caller's drop closes it, also on error
	return m.CreateDatabase(ctx, s.cfg.Database, "")
}

// topics are those with work: a schema seen, or directories waiting.
func (s *Syncer) topics() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.schemas))
	for t := range s.schemas {
		out = append(out, t)
	}
	for t, dirs := range s.parts {
		if _, ok := s.schemas[t]; !ok && len(dirs) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// syncTopic brings one topic's table up to date: schema first, then the
// startup catch-up, then newly committed partitions.
func (s *Syncer) syncTopic(ctx context.Context, ms Metastore, topic string) error {
	tt := s.cfg.Tables(topic)
	ready, err := s.tableReady(ctx, ms, tt, topic)
	if err != nil || !ready {
		return err
	}
	s.mu.Lock()
	synced := s.synced[topic]
	s.mu.Unlock()
	if !synced {
		dirs, err := tt.ListDirs(ctx)
		if err != nil {
			return fmt.Errorf("list committed directories of %s: %w", topic, err)
		}
		s.Committed(topic, dirs)
		s.mu.Lock()
		s.synced[topic] = true
		s.mu.Unlock()
	}
	return s.addPartitions(ctx, ms, tt, topic)
}

// tableReady makes the table match the newest schema seen and reports
// whether partitions can be added. Directories can arrive before any
// schema: recovery rolls a commit forward before this process has read a
// record of the topic, and it may never read one (a quiet topic). Then
// they go into the table if it exists; if it does not, they wait, counted
// as pending, for the first schema, which creates it.
func (s *Syncer) tableReady(ctx context.Context, ms Metastore, tt TopicTable, topic string) (bool, error) {
	s.mu.Lock()
	want, have := s.schemas[topic], s.applied[topic]
	s.mu.Unlock()
	switch {
	case want != "" && want == have:
		return true, nil
	case want != "":
		if err := s.ensureTable(ctx, ms, tt, want); err != nil {
			return false, err
		}
		s.mu.Lock()
		s.applied[topic] = want
		s.mu.Unlock()
		return true, nil
	}
	_, err := ms.GetTable(ctx, s.cfg.Database, tt.Name)
	if errors.Is(err, ErrNotFound) {
		s.cfg.Logger.Debug("committed directories wait for a schema to create the table", "table", s.cfg.Database+"."+tt.Name)
		return false, nil
	}
	return err == nil, err
}

// ensureTable creates the table, or alters it with CASCADE so existing
// partitions read the new columns too.
func (s *Syncer) ensureTable(ctx context.Context, ms Metastore, tt TopicTable, avroSchema string) error {
	t, err := s.table(tt, avroSchema)
	if err != nil {
		return err
	}
	_, err = ms.GetTable(ctx, s.cfg.Database, tt.Name)
	switch {
	case errors.Is(err, ErrNotFound):
		err = ms.CreateTable(ctx, t)
		if errors.Is(err, ErrTableExists) {
			err = ms.AlterTable(ctx, t, true)
		}
		s.cfg.Logger.Info("hive table created", "table", s.cfg.Database+"."+tt.Name, "err", err)
	case err == nil:
		err = ms.AlterTable(ctx, t, true)
		s.cfg.Logger.Info("hive table schema updated (CASCADE)", "table", s.cfg.Database+"."+tt.Name, "err", err)
	}
	return err
}

func (s *Syncer) table(tt TopicTable, avroSchema string) (Table, error) {
	cols, err := HiveColumns(avroSchema)
	if err != nil {
		return Table{}, err
	}
	t := Table{Database: s.cfg.Database, Name: tt.Name, Location: tt.Location, Format: s.cfg.Format, Columns: cols}
	if s.cfg.Format == FormatAvro {
		t.AvroSchema = avroSchema
	}
	for _, k := range tt.PartitionKeys {
		t.PartitionKeys = append(t.PartitionKeys, Column{Name: sanitize(k), Type: "string"})
	}
	return t, nil
}

func (s *Syncer) addPartitions(ctx context.Context, ms Metastore, tt TopicTable, topic string) error {
	s.mu.Lock()
	dirs := make([]string, 0, len(s.parts[topic]))
	for d := range s.parts[topic] {
		dirs = append(dirs, d)
	}
	s.mu.Unlock()
	if len(dirs) == 0 {
		return nil
	}
	parts := make([]Partition, 0, len(dirs))
	for _, d := range dirs {
		vals, err := tt.Values(d)
		if err != nil {
			s.cfg.Logger.Error("directory cannot be a Hive partition; skipped", "topic", topic, "dir", d, "err", err)
			continue
		}
		parts = append(parts, Partition{Values: vals, Location: tt.Location + "/" + d})
	}
	if err := ms.AddPartitions(ctx, s.cfg.Database, tt.Name, parts); err != nil {
		return err
	}
	s.mu.Lock()
	for _, d := range dirs {
		delete(s.parts[topic], d)
	}
	s.mu.Unlock()
	s.cfg.Logger.Info("hive partitions registered", "table", s.cfg.Database+"."+tt.Name, "partitions", len(parts))
	return nil
}
