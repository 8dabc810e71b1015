package hive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// memMetastore is an in-memory metastore that can be "down". The Syncer
// talks to it through memConns, one per Connect, so that tests can check
// that every connection is closed.
type memMetastore struct {
	mu     sync.Mutex
	down   bool
	tables map[string]Table
	parts  map[string]map[string]bool // table → "k=v/..." partitions
	alters int
	conns  []*memConn // every connection handed out, in order
}

// memConn is one connection to a memMetastore.
type memConn struct {
	*memMetastore
	closes int // how often Close was called
}

// connect hands out a new connection: the test Syncers' SyncConfig.Connect.
func (m *memMetastore) connect(context.Context) (Metastore, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &memConn{memMetastore: m}
	m.conns = append(m.conns, c)
	return c, nil
}

func (c *memConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closes++
	return nil
}

// open counts the connections not closed yet; closedTwice those closed more than once.
func (m *memMetastore) open() (open, closedTwice int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		if c.closes == 0 {
			open++
		}
		if c.closes > 1 {
			closedTwice++
		}
	}
	return open, closedTwice
}

func newMemMetastore() *memMetastore {
	return &memMetastore{tables: map[string]Table{}, parts: map[string]map[string]bool{}}
}

var errDown = errors.New("connection refused")

func (m *memMetastore) check() error {
	if m.down {
		return &Error{Op: "call", Kind: ErrUnavailable, Err: errDown}
	}
	return nil
}

func (m *memMetastore) setDown(d bool) { m.mu.Lock(); m.down = d; m.mu.Unlock() }

func (m *memMetastore) CreateDatabase(context.Context, string, string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.check()
}

func (m *memMetastore) CreateTable(_ context.Context, t Table) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return err
	}
	if _, ok := m.tables[t.Name]; ok {
		return &Error{Kind: ErrTableExists}
	}
	m.tables[t.Name] = t
	return nil
}

func (m *memMetastore) GetTable(_ context.Context, _, name string) (*Table, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return nil, err
	}
	t, ok := m.tables[name]
	if !ok {
		return nil, &Error{Kind: ErrNotFound}
	}
	return &t, nil
}

func (m *memMetastore) AlterTable(_ context.Context, t Table, cascade bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return err
	}
	if !cascade {
		return errors.New("alter without cascade leaves old partitions on the old columns")
	}
	m.tables[t.Name] = t
	m.alters++
	return nil
}

func (m *memMetastore) AddPartitions(_ context.Context, _, table string, parts []Partition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(); err != nil {
		return err
	}
	if _, ok := m.tables[table]; !ok {
		return &Error{Kind: ErrNotFound}
	}
	if m.parts[table] == nil {
		m.parts[table] = map[string]bool{}
	}
	for _, p := range parts {
		m.parts[table]["partition="+strings.Join(p.Values, "/")] = true
	}
	return nil
}

func (m *memMetastore) partitions(table string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for p := range m.parts[table] {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

const (
	syncSchemaV1 = `{"type":"record","name":"r","fields":[{"name":"a","type":"long"}]}`
	syncSchemaV2 = `{"type":"record","name":"r","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":""}]}`
)

func newTestSyncer(ms *memMetastore, onDisk func() []string) *Syncer {
	return NewSyncer(SyncConfig{
		Database: "db", Format: FormatAvro, Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Connect: ms.connect,
		Tables: func(topic string) TopicTable {
			return TopicTable{
				Name: TableName("${topic}", topic), Location: "hdfs://nn/topics/" + topic, PartitionKeys: []string{"partition"},
				Values:   func(enc string) ([]string, error) { return []string{strings.TrimPrefix(enc, "partition=")}, nil },
				ListDirs: func(context.Context) ([]string, error) { return onDisk(), nil },
			}
		},
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSyncerRegistersCommittedPartitions(t *testing.T) {
	ms := newMemMetastore()
	s := newTestSyncer(ms, func() []string { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	s.SchemaSeen("my-topic", 1, syncSchemaV1)
	waitUntil(t, "table", func() bool { _, err := ms.GetTable(ctx, "db", "my_topic"); return err == nil })
	if got := ms.partitions("my_topic"); len(got) != 0 {
		t.Fatalf("partitions before any commit: %v", got)
	}
	s.Committed("my-topic", []string{"partition=0", "partition=1"})
	waitUntil(t, "partitions", func() bool { return len(ms.partitions("my_topic")) == 2 })
	s.SchemaSeen("my-topic", 1, syncSchemaV1) // older or same id: ignored
	s.SchemaSeen("my-topic", 2, syncSchemaV2)
	waitUntil(t, "alter", func() bool { ms.mu.Lock(); defer ms.mu.Unlock(); return ms.alters == 1 })
	tbl, _ := ms.GetTable(ctx, "db", "my_topic")
	if cols := tbl.Columns; len(cols) != 2 || cols[1].Name != "b" {
		t.Fatalf("columns after evolution: %+v", cols)
	}
}

// TestSyncerOutageThenRestart: the metastore is down while files are
// committed and the process restarts; once it is back every directory on
// HDFS is a partition, once.
func TestSyncerOutageThenRestart(t *testing.T) {
	ms := newMemMetastore()
	ms.setDown(true)
	var onDisk []string
	s1 := newTestSyncer(ms, func() []string { return onDisk })
	ctx1, stop1 := context.WithCancel(context.Background())
	go s1.Run(ctx1)
	s1.SchemaSeen("t", 1, syncSchemaV1)
	onDisk = []string{"partition=0"}
	s1.Committed("t", []string{"partition=0"})
	waitUntil(t, "a failed round", func() bool { _, _, err := s1.Pending(); return err != nil })
	n, since, err := s1.Pending()
	if n == 0 || since.IsZero() || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("pending = %d since %v err %v; want visible pending work", n, since, err)
	}
	stop1() // the daemon restarts while the metastore is still down
	onDisk = []string{"partition=0", "partition=1", "partition=2"}
	s2 := newTestSyncer(ms, func() []string { return onDisk })
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	go s2.Run(ctx2)
	s2.SchemaSeen("t", 1, syncSchemaV1)
	time.Sleep(30 * time.Millisecond)
	ms.setDown(false)
	waitUntil(t, "all partitions", func() bool { return len(ms.partitions("t")) == 3 })
	waitUntil(t, "nothing pending", func() bool { n, _, _ := s2.Pending(); return n == 0 })
}

// TestSyncerDrainAfterStop: partitions committed while the process shuts
// down (after Run returned) are registered by Drain; with the metastore
// down, Drain fails within its timeout and the work stays pending.
func TestSyncerDrainAfterStop(t *testing.T) {
	ms := newMemMetastore()
	s := newTestSyncer(ms, func() []string { return nil })
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	s.SchemaSeen("t", 1, syncSchemaV1)
	waitUntil(t, "table", func() bool { _, err := ms.GetTable(ctx, "db", "t"); return err == nil })
	stop()
	<-done
	s.Committed("t", []string{"partition=7"}) // the shutdown commit
	ms.setDown(true)
	if err := s.Drain(time.Second); err == nil {
		t.Fatal("Drain with the metastore down: want an error")
	}
	if n, _, _ := s.Pending(); n == 0 {
		t.Fatal("work dropped after a failed Drain")
	}
	ms.setDown(false)
	if err := s.Drain(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := ms.partitions("t"); len(got) != 1 || got[0] != "partition=7" {
		t.Fatalf("partitions after Drain: %v", got)
	}
}

// TestSyncerClosesConnections: a connection dropped for a redial, the one
// held when Run ends and the one Drain opens are all closed, each once.
func TestSyncerClosesConnections(t *testing.T) {
	ms := newMemMetastore()
	ms.setDown(true)
	s := newTestSyncer(ms, func() []string { return nil })
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	s.SchemaSeen("t", 1, syncSchemaV1)
	waitUntil(t, "a redial", func() bool { ms.mu.Lock(); defer ms.mu.Unlock(); return len(ms.conns) >= 2 })
	ms.setDown(false)
	waitUntil(t, "table", func() bool { _, err := ms.GetTable(ctx, "db", "t"); return err == nil })
	if open, _ := ms.open(); open != 1 {
		t.Fatalf("%d connections open while Run works, want 1: dropped ones must be closed", open)
	}
	stop()
	<-done
	s.Committed("t", []string{"partition=1"})
	if err := s.Drain(time.Second); err != nil {
		t.Fatal(err)
	}
	if open, twice := ms.open(); open != 0 || twice != 0 {
		t.Fatalf("after Run and Drain: %d connections open, %d closed twice; want 0 and 0", open, twice)
	}
}

// TestSyncerDirectoriesBeforeAnySchema: directories committed before this
// process has seen a schema of the topic (recovery rolled a commit forward
// first, issue 20 N3) go into the table if it exists, with the startup
// catch-up; if it does not, they wait, counted, and the first schema brings
// them in. Nothing is dropped either way.
func TestSyncerDirectoriesBeforeAnySchema(t *testing.T) {
	cases := []struct {
		name        string
		tableExists bool     // created by an earlier process
		want        []string // partitions after a round without a schema
		pending     int      // directories still waiting then
	}{
		{"table exists", true, []string{"partition=0", "partition=1", "partition=2"}, 0},
		{"no table yet", false, nil, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms := newMemMetastore()
			if tc.tableExists {
				earlier := newTestSyncer(ms, func() []string { return nil })
				earlier.SchemaSeen("t", 1, syncSchemaV1)
				if err := earlier.Drain(time.Second); err != nil {
					t.Fatal(err)
				}
			}
			onDisk := []string{"partition=0", "partition=1", "partition=2"} // 2: pending when the earlier process stopped
			s := newTestSyncer(ms, func() []string { return onDisk })
			s.Committed("t", []string{"partition=0", "partition=1"}) // rolled forward by recovery
			if err := s.Drain(time.Second); err != nil {
				t.Fatal(err)
			}
			if got := ms.partitions("t"); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("partitions without a schema seen: %v, want %v", got, tc.want)
			}
			if n, _, _ := s.Pending(); n != tc.pending {
				t.Fatalf("pending = %d, want %d", n, tc.pending)
			}
			s.SchemaSeen("t", 1, syncSchemaV1)
			if err := s.Drain(time.Second); err != nil {
				t.Fatal(err)
			}
			if got := ms.partitions("t"); fmt.Sprint(got) != fmt.Sprint(onDisk) {
				t.Fatalf("partitions once a schema is seen: %v, want %v", got, onDisk)
			}
			if n, _, _ := s.Pending(); n != 0 {
				t.Fatalf("pending = %d after everything is registered", n)
			}
		})
	}
}
