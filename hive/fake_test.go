package hive

import (
	"context"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	hms "github.com/beltran/gohive/hive_metastore"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// TSimpleServer.Stop waits for client goroutines forever by default.
	thrift.ServerStopTimeout = 2 * time.Second
	// Every Syncer and Client goroutine and connection must be gone when
	// the tests end.
	goleak.VerifyTestMain(m)
}

// fakeHMS is an in-memory metastore behind the real generated Thrift
// processor. The embedded nil interface makes every RPC the client is not
// supposed to use panic.
type fakeHMS struct {
	hms.ThriftHiveMetastore

	mu       sync.Mutex
	dbs      map[string]*hms.Database
	tables   map[string]*hms.Table                // "db.table"
	parts    map[string]map[string]*hms.Partition // "db.table" → name
	alterEnv []map[string]string                  // environment of each alter
	calls    []string                             // RPC names in order
	failNext map[string]error                     // RPC name → error to return once
	block    chan struct{}                        // get_table_req of "slow" tables waits on it
	blocked  chan struct{}                        // one value per get_table_req of a "slow" table received
}

func newFakeHMS() *fakeHMS {
	return &fakeHMS{
		dbs:      map[string]*hms.Database{"default": {Name: "default", LocationUri: "hdfs://nn:8020/warehouse/"}},
		tables:   map[string]*hms.Table{},
		parts:    map[string]map[string]*hms.Partition{},
		failNext: map[string]error{},
		block:    make(chan struct{}),
		blocked:  make(chan struct{}, 16),
	}
}

// serveFake serves f on 127.0.0.1:0 with the binary protocol and returns
// its host:port.
func serveFake(t *testing.T, f *fakeHMS) string {
	t.Helper()
	sock, err := thrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Listen(); err != nil {
		t.Fatal(err)
	}
	srv := thrift.NewTSimpleServer4(hms.NewThriftHiveMetastoreProcessor(f), sock,
		thrift.NewTBufferedTransportFactory(8192), thrift.NewTBinaryProtocolFactoryConf(nil))
	// AcceptLoop on the socket listening already, not Serve: Serve listens
	// again when Stop has run first (a test that ends before the goroutine
	// starts), and that listener is never closed.
	srv.SetLogContext(context.Background())
	go func() { _ = srv.AcceptLoop() }()
	t.Cleanup(func() { _ = srv.Stop() })
	t.Cleanup(func() { close(f.block) }) // runs first: frees blocked handlers
	return sock.Addr().String()
}

// enter records a call and returns an injected failure, if any.
func (f *fakeHMS) enter(name string) error {
	f.calls = append(f.calls, name)
	if err, ok := f.failNext[name]; ok {
		delete(f.failNext, name)
		return err
	}
	return nil
}

func (f *fakeHMS) callNames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeHMS) table(key string) *hms.Table {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tables[key]
}

func (f *fakeHMS) CreateDatabase(_ context.Context, db *hms.Database) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("create_database"); err != nil {
		return err
	}
	if db.LocationUri == "" { // as Hive 3 does
		return &hms.MetaException{Message: "java.lang.IllegalArgumentException: Can not create a Path from an empty string"}
	}
	if _, ok := f.dbs[db.Name]; ok {
		return &hms.AlreadyExistsException{Message: "Database " + db.Name + " already exists"}
	}
	f.dbs[db.Name] = db
	return nil
}

func (f *fakeHMS) GetDatabase(_ context.Context, name string) (*hms.Database, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("get_database"); err != nil {
		return nil, err
	}
	db, ok := f.dbs[name]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: "database " + name + " not found"}
	}
	return db, nil
}

func (f *fakeHMS) database(name string) *hms.Database {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dbs[name]
}

func (f *fakeHMS) CreateTable(_ context.Context, tbl *hms.Table) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("create_table"); err != nil {
		return err
	}
	if _, ok := f.dbs[tbl.DbName]; !ok {
		return &hms.NoSuchObjectException{Message: "database " + tbl.DbName + " does not exist"}
	}
	key := tbl.DbName + "." + tbl.TableName
	if _, ok := f.tables[key]; ok {
		return &hms.AlreadyExistsException{Message: "Table " + tbl.TableName + " already exists"}
	}
	// Like Hive, the server adds its own bookkeeping parameter.
	tbl.Parameters["transient_lastDdlTime"] = "1700000000"
	tbl.CreateTime = 1700000000
	f.tables[key] = tbl
	f.parts[key] = map[string]*hms.Partition{}
	return nil
}

func (f *fakeHMS) GetTableReq(_ context.Context, req *hms.GetTableRequest) (*hms.GetTableResult_, error) {
	if strings.HasPrefix(req.TblName, "slow") {
		select {
		case f.blocked <- struct{}{}:
		default:
		}
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("get_table_req"); err != nil {
		return nil, err
	}
	tbl, ok := f.tables[req.DbName+"."+req.TblName]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: req.DbName + "." + req.TblName + " table not found"}
	}
	return &hms.GetTableResult_{Table: tbl}, nil
}

func (f *fakeHMS) AlterTableWithEnvironmentContext(_ context.Context, db, name string, tbl *hms.Table, env *hms.EnvironmentContext) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("alter_table_with_environment_context"); err != nil {
		return err
	}
	key := db + "." + name
	old, ok := f.tables[key]
	if !ok {
		return &hms.InvalidOperationException{Message: "table " + key + " doesn't exist"}
	}
	if len(old.PartitionKeys) != len(tbl.PartitionKeys) {
		return &hms.InvalidOperationException{Message: "partition keys can not be changed."}
	}
	f.alterEnv = append(f.alterEnv, env.Properties)
	if env.Properties["CASCADE"] == "true" {
		for _, p := range f.parts[key] {
			p.Sd.Cols = tbl.Sd.Cols
		}
	}
	f.tables[key] = tbl
	return nil
}

func (f *fakeHMS) AddPartitionsReq(_ context.Context, req *hms.AddPartitionsRequest) (*hms.AddPartitionsResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("add_partitions_req"); err != nil {
		return nil, err
	}
	key := req.DbName + "." + req.TblName
	tbl, ok := f.tables[key]
	if !ok {
		return nil, &hms.InvalidObjectException{Message: "table " + key + " does not exist"}
	}
	for _, p := range req.Parts {
		name := partName(tbl, p.Values)
		if _, exists := f.parts[key][name]; exists {
			if req.IfNotExists {
				continue
			}
			return nil, &hms.AlreadyExistsException{Message: "partition " + name + " exists"}
		}
		f.parts[key][name] = p
	}
	return &hms.AddPartitionsResult_{}, nil
}

func partName(tbl *hms.Table, values []string) string {
	kv := make([]string, len(values))
	for i, v := range values {
		kv[i] = tbl.PartitionKeys[i].Name + "=" + v
	}
	return strings.Join(kv, "/")
}

func (f *fakeHMS) partition(key, name string) *hms.Partition {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts[key][name]
}

func (f *fakeHMS) GetPartitionNames(_ context.Context, db, name string, _ int16) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("get_partition_names"); err != nil {
		return nil, err
	}
	parts, ok := f.parts[db+"."+name]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: db + "." + name + " table not found"}
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func (f *fakeHMS) DropTable(_ context.Context, db, name string, _ bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("drop_table"); err != nil {
		return err
	}
	key := db + "." + name
	if _, ok := f.tables[key]; !ok {
		return &hms.NoSuchObjectException{Message: key + " table not found"}
	}
	delete(f.tables, key)
	delete(f.parts, key)
	return nil
}

// proxy forwards TCP to a target and can cut every live connection, to
// simulate a network failure between client and metastore.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (f *fakeHMS) GetPartition(_ context.Context, db, name string, values []string) (*hms.Partition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("get_partition"); err != nil {
		return nil, err
	}
	key := db + "." + name
	tbl, ok := f.tables[key]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: key + " table not found"}
	}
	p, ok := f.parts[key][partName(tbl, values)]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: "partition not found"}
	}
	cp := *p
	sd := *p.Sd
	cp.Sd = &sd
	return &cp, nil
}

func (f *fakeHMS) AlterPartition(_ context.Context, db, name string, p *hms.Partition) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("alter_partition"); err != nil {
		return err
	}
	key := db + "." + name
	tbl, ok := f.tables[key]
	if !ok {
		return &hms.InvalidOperationException{Message: key + " table not found"}
	}
	pn := partName(tbl, p.Values)
	if _, ok := f.parts[key][pn]; !ok {
		return &hms.InvalidOperationException{Message: "partition " + pn + " does not exist"}
	}
	f.parts[key][pn] = p
	return nil
}
