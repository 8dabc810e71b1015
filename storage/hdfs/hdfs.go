// Package hdfs owns the HDFS backend of storage.FS, on github.com/colinmarc/hdfs/v2.
//
// The client has no hflush/hsync and no lease recovery, and Rename overwrites a
// destination file: the commit protocol is built so it needs none of those
// (see docs/design.md). What this package adds on top of the client is only
// what storage.FS promises: parents created on Create, Close retried while the
// NameNode reports the last block still replicating, and names resolved under
// the URL's path.
//
// Every call is one NameNode round trip: the client's Open, ReadDir, Rename,
// Remove and MkdirAll each ask getFileInfo first, so this package uses the
// *Direct calls our fork adds (third_party/colinmarc-hdfs, D46) and Create
// uses CreateFile. The NameNode's round trips bound how fast many partitions
// commit and recover (docs/benchmarks.md, "10,000 partitions").
package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinmarc/hdfs/v2"
	krb "github.com/jcmturner/gokrb5/v8/client"

	"github.com/hdfs-sink/hdfs-sink/storage"
)

// Options configures a connection.
type Options struct {
	// URL is hdfs://namenode:port[/base]. With ConfDir set, the host may be a
	// nameservice; NameNode addresses then come from the Hadoop config.
	URL string
	// ConfDir holds core-site.xml and hdfs-site.xml (hadoop.conf.dir).
	ConfDir string
	// User is the HDFS user to act as (simple authentication only: with
	// Kerberos the NameNode takes the principal's name).
	User string
	// Kerberos, when set, authenticates to the NameNode with this client:
	// a login the process shares (see package kerberos). Without it, a
	// hadoop.conf.dir that asks for Kerberos is an error.
	Kerberos *krb.Client
	// NameNodePrincipal is the NameNode's principal (nn/_HOST@REALM;
	// hdfs.namenode.principal); empty: dfs.namenode.kerberos.principal of
	// ConfDir. _HOST becomes the host of the NameNode address dialled.
	NameNodePrincipal string
	// DialTimeout bounds NameNode and DataNode dials.
	DialTimeout time.Duration
	// IOTimeout bounds every read and write on a NameNode or DataNode
	// connection (default 60 s, Hadoop's dfs.client.socket-timeout): a
	// NameNode call, or a DataNode's ack, that takes longer fails, and the
	// connection is dialled again. Without it a hung NameNode hangs every
	// call, silently.
	IOTimeout time.Duration
	// CloseRetries bounds retries of Close while the NameNode answers
	// "replicating" (the Java client retries the same way).
	CloseRetries int
	// Connections is how many NameNode connections to spread calls over
	// (default 4). colinmarc/hdfs sends one RPC at a time per connection,
	// so partitions committing at once queued behind each other on a
	// single one (an execution trace of the benchmark showed more time
	// waiting for its lock than in the RPCs).
	Connections int
}

// FS is an HDFS-backed storage.FS.
type FS struct {
	clients []*client
	next    atomic.Uint32
	base    string
	opts    Options
	dial    *dialer
}

var _ storage.FS = (*FS)(nil)

// New connects to the NameNode named by opts.URL.
func New(opts Options) (*FS, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		return nil, fmt.Errorf("hdfs url %q: want hdfs://host:port[/path]", opts.URL)
	}
	copts, _, err := clientOptions(opts)
	if err != nil {
		return nil, err
	}
	if opts.CloseRetries <= 0 {
		// 5 ms doubling to 2 s: about 11 s in all, as long as before.
		opts.CloseRetries = 13
	}
	if opts.Connections <= 0 {
		opts.Connections = 4
	}
	f := newFS(path.Clean("/"+u.Path), opts, &copts)
	for range opts.Connections {
		c, err := connect(copts, opts.URL)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.clients = append(f.clients, &client{Client: c})
	}
	return f, nil
}

// newFS is a store with no connection yet, whose connections copts will
// dial through the store's dialer.
func newFS(base string, opts Options, copts *hdfs.ClientOptions) *FS {
	d := newDialer(orDefault(opts.DialTimeout, 10*time.Second), orDefault(opts.IOTimeout, DefaultIOTimeout))
	copts.NamenodeDialFunc, copts.DatanodeDialFunc = d.dial, d.dial
	return &FS{base: base, opts: opts, dial: d}
}

func connect(copts hdfs.ClientOptions, url string) (*hdfs.Client, error) {
	c, err := hdfs.NewClient(copts)
	if err != nil {
		return nil, fmt.Errorf("connect to HDFS %s: %w", url, authError(copts, err))
	}
	// The client caches the server defaults on first use without a lock;
	// fetch them now, before partitions use the client concurrently.
	// (The data encryption key is the fork's to keep, under a lock: D50.)
	if _, err := c.ServerDefaults(); err != nil {
		c.Close()
		return nil, fmt.Errorf("HDFS %s: get server defaults: %w", url, authError(copts, err))
	}
	return c, nil
}

// client picks the next NameNode connection. Any of them may act on any
// path: the NameNode orders all calls, whichever connection carries them.
// A file is completed through the connection that created it (its lease
// holder), which the FileWriter remembers. A connection with a call left
// behind (await) is passed over while another has none: that call may
// hold it until the NameNode answers or the I/O timeout ends it.
func (f *FS) client() *client {
	start := int(f.next.Add(1) % uint32(len(f.clients)))
	for i := range f.clients {
		if c := f.clients[(start+i)%len(f.clients)]; c.behind.Load() == 0 {
			return c
		}
	}
	return f.clients[start]
}

// clientOptions resolves the NameNodes (Resolve: exactly the URL's
// nameservice's, never another's), takes the client's other settings
// (data transfer protection, DataNode host names, Kerberos) from
// hadoop.conf.dir as colinmarc/hdfs reads them, and says what security
// they amount to. colinmarc's own NameNode list is not used: it holds
// every nameservice's NameNodes. The dial functions are the store's
// (newFS).
func clientOptions(opts Options) (hdfs.ClientOptions, Security, error) {
	t, conf, err := resolve(opts)
	if err != nil {
		return hdfs.ClientOptions{}, Security{}, err
	}
	var copts hdfs.ClientOptions
	if conf != nil {
		copts = hdfs.ClientOptionsFromConf(conf)
	}
	copts.Addresses = nil
	for _, nn := range t.NameNodes {
		copts.Addresses = append(copts.Addresses, nn.Addr)
	}
	sec, err := security(conf, opts, &copts)
	if err != nil {
		return copts, sec, err
	}
	copts.User = opts.User
	if copts.User == "" {
		copts.User = "root"
	}
	return copts, sec, nil
}

// DefaultIOTimeout is Options.IOTimeout's default.
const DefaultIOTimeout = 60 * time.Second

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (f *FS) abs(name string) string { return path.Join(f.base, name) }

// Create creates name exclusively, creating its parent directories. The
// file's Write and Close honour ctx. A Create given up that succeeds later
// closes the file it made (an empty file, a temp file recovery removes).
func (f *FS) Create(ctx context.Context, name string) (storage.File, error) {
	p := f.abs(name)
	c := f.client()
	w, err := do(ctx, c, "create", p, func() (*hdfs.FileWriter, error) {
		return createExclusive(c, p)
	}, func(w *hdfs.FileWriter, err error) {
		if err == nil {
			w.Close()
		}
	})
	if err != nil {
		return nil, err
	}
	return &file{w: w, ctx: ctx, c: c, name: p, retries: f.opts.CloseRetries}, nil
}

// createExclusive creates p and its missing parents, failing with
// fs.ErrExist if anything is there, in one NameNode call. colinmarc's
// Create asks getFileInfo first and refuses a missing parent, though the
// create request (flag CREATE, no OVERWRITE) already refuses an existing
// file or directory (FileAlreadyExistsException, or
// AlreadyBeingCreatedException while another client writes it: both
// os.ErrExist) and can make the parents itself: a WAL segment in its new
// staging directory, or a claim's first temp file, took a failed create,
// a mkdirs and a create (issue 25's 10,000 partitions: 20 NameNode calls
// per partition's commit measured).
func createExclusive(c *client, p string) (*hdfs.FileWriter, error) {
	d, err := c.ServerDefaults() // cached since connect
	if err != nil {
		return nil, err
	}
	return c.CreateFileDirect(p, int(d.Replication), d.BlockSize, 0o644)
}

// withParent runs op, and once more after creating the parent of p if op
// failed for want of it. Trying first saves the NameNode a lookup per call
// where the parent usually exists (a commit's renames and temp files):
// the NameNode's round trips, not bandwidth, bound how fast many
// partitions commit.
func withParent[T any](c *client, p string, op func() (T, error)) (T, error) {
	v, err := op()
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return v, err
	}
	if err := c.MkdirAllDirect(path.Dir(p), 0o755); err != nil {
		return v, err
	}
	return op()
}

// Open opens name for reading; its reads honour ctx.
func (f *FS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	p := f.abs(name)
	c := f.client()
	r, err := do(ctx, c, "open", p, func() (*hdfs.FileReader, error) { return c.OpenDirect(p) },
		func(r *hdfs.FileReader, err error) {
			if err == nil {
				r.Close()
			}
		})
	if err != nil {
		return nil, err
	}
	return &reader{r: r, ctx: ctx, c: c, name: p}, nil
}

// reader is a file open for reading whose reads honour Open's context. A
// read given up leaves the reader broken, and the read left behind closes
// the client's reader once it returns.
type reader struct {
	r      io.ReadCloser
	ctx    context.Context
	c      *client
	name   string
	broken error
}

func (r *reader) Read(p []byte) (int, error) {
	if r.broken != nil {
		return 0, r.broken
	}
	if r.ctx.Err() != nil {
		r.broken = storage.Interrupted(r.ctx, "read", r.name)
		r.r.Close()
		return 0, r.broken
	}
	if r.ctx.Done() == nil {
		return r.r.Read(p)
	}
	// A read left behind must not write into p, which is the caller's
	// again once Read returns: it reads into a buffer of its own.
	buf := getBuf(len(p))
	n, err, ok := await(r.ctx, r.c, func() (int, error) { return r.r.Read(*buf) },
		func(int, error) { putBuf(buf); r.r.Close() })
	if !ok {
		r.broken = storage.Interrupted(r.ctx, "read", r.name)
		return 0, r.broken
	}
	copy(p, (*buf)[:n])
	putBuf(buf)
	return n, err
}

func (r *reader) Close() error {
	if r.broken != nil {
		return nil // closed by Read, or by the read left behind
	}
	return r.r.Close()
}

// bufs holds the buffers that reads and writes left behind use instead of
// the caller's.
var bufs sync.Pool

// getBuf is a buffer of n bytes from bufs.
func getBuf(n int) *[]byte {
	b, _ := bufs.Get().(*[]byte)
	if b == nil || cap(*b) < n {
		nb := make([]byte, n)
		return &nb
	}
	*b = (*b)[:n]
	return b
}

func putBuf(b *[]byte) { bufs.Put(b) }

// Rename renames oldpath to newpath, creating newpath's parent.
func (f *FS) Rename(ctx context.Context, oldpath, newpath string) error {
	op, np := f.abs(oldpath), f.abs(newpath)
	c := f.client()
	_, err := do(ctx, c, "rename", op, func() (struct{}, error) {
		return withParent(c, np, none(func() error { return c.RenameDirect(op, np) }))
	}, nil)
	return err
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(ctx context.Context, name string) error {
	p := f.abs(name)
	c := f.client()
	_, err := do(ctx, c, "remove", p, none(func() error { return c.RemoveDirect(p, false) }), nil)
	return err
}

// RemoveAll removes a tree; a missing name is not an error.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p := f.abs(name)
	c := f.client()
	_, err := do(ctx, c, "removeall", p, none(func() error { return removeAll(c, p) }), nil)
	return err
}

// removeAll deletes the tree at p; a missing p is not an error.
func removeAll(c *client, p string) error {
	if err := c.RemoveDirect(p, true); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	p := f.abs(name)
	c := f.client()
	return do(ctx, c, "readdir", p, func() ([]fs.FileInfo, error) { return c.ReadDirDirect(p) }, nil)
}

// Stat describes name.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	p := f.abs(name)
	c := f.client()
	return do(ctx, c, "stat", p, func() (fs.FileInfo, error) { return c.Stat(p) }, nil)
}

// MkdirAll creates a directory and its parents.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	p := f.abs(name)
	c := f.client()
	_, err := do(ctx, c, "mkdir", p, none(func() error { return c.MkdirAllDirect(p, 0o755) }), nil)
	return err
}

// Close closes the NameNode connections; leases of open files lapse. It
// first closes every connection of the store, which ends the calls still
// under way (a call left behind included) instead of waiting for them.
func (f *FS) Close() error {
	f.dial.closeAll()
	var errs []error
	for _, c := range f.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// fileWriter is what file needs of *hdfs.FileWriter.
type fileWriter interface {
	Write(p []byte) (int, error)
	Close() error
}

type file struct {
	w       fileWriter
	ctx     context.Context // Create's: Write and Close honour it
	c       *client         // the connection that created it, for await
	name    string
	retries int
	closed  bool
	// broken is the write or close error after which the file can no
	// longer be made durable. colinmarc/hdfs would let a second Close
	// succeed: its block stream, failed, counts as finished, and the
	// NameNode is told the length of everything written, acknowledged by
	// the DataNode or not. A file committed that way has a block no
	// DataNode holds in full.
	broken error
	// released: the client's Close has run once, or will when the call
	// left behind returns, which stops the block stream's goroutines and
	// closes its DataNode connection, whatever the outcome. A broken file
	// is still released, once.
	released bool
}

// Write skips empty writes: colinmarc/hdfs allocates a block for one, and a
// block the DataNode never receives data for is never reported complete, so
// the file could never be closed (seen on Hadoop 3.5.0).
func (f *file) Write(p []byte) (int, error) {
	if f.broken != nil {
		return 0, f.broken
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.ctx.Err() != nil {
		return 0, f.interrupted("write", false)
	}
	n, err, ok := f.write(p)
	if !ok {
		return 0, f.interrupted("write", true)
	}
	if err != nil {
		err = explainPipeline(err)
		f.broken = fmt.Errorf("%w (the file cannot be completed)", err)
	}
	return n, err
}

// pipelineFailures are how colinmarc/hdfs (v2.4.0) reports a DataNode of a
// block's write pipeline failing: the pipeline's set-up answered with a
// status other than SUCCESS (the first DataNode could not reach the next:
// the DataNode it names is dropped), or an acknowledgement reported one.
var pipelineFailures = []string{"write failed: ", "Ack error from datanode: "}

// explainPipeline says what a pipeline failure means: colinmarc/hdfs
// rebuilds no pipeline (the Java client goes on with the DataNodes left),
// so the file is lost and written again. Alone, "write failed: ERROR ()"
// was all GET /status showed when a DataNode of three died (issue 26).
func explainPipeline(err error) error {
	for _, p := range pipelineFailures {
		if strings.HasPrefix(err.Error(), p) {
			return fmt.Errorf("%w: a DataNode of the block's write pipeline failed, and this client rebuilds no pipeline", err)
		}
	}
	return err
}

// write writes p through the client's writer, giving up when ctx ends
// (ok false). A write left behind must not read p, which is the caller's
// again once Write returns: it writes a copy.
func (f *file) write(p []byte) (n int, err error, ok bool) {
	if f.ctx.Done() == nil {
		n, err = f.w.Write(p)
		return n, err, true
	}
	buf := getBuf(len(p))
	copy(*buf, p)
	return await(f.ctx, f.c, func() (int, error) {
		defer putBuf(buf)
		return f.w.Write(*buf)
	}, func(int, error) { f.w.Close() })
}

// interrupted breaks the file because its context ended and returns the
// error saying so. With a call left behind, that call releases the
// client's writer when it returns; otherwise it is released here, in the
// background: it may wait for the DataNode.
func (f *file) interrupted(op string, leftBehind bool) error {
	f.broken = storage.Interrupted(f.ctx, op, f.name)
	if !f.released {
		f.released = true
		if !leftBehind {
			go f.w.Close()
		}
	}
	return f.broken
}

// firstCloseRetryWait is short because the wait is usually short: on the
// test environment a small file's first "complete" failed about half the
// time and one 2 ms wait was enough, so a 50 ms first wait added ~25 ms to
// every close, and each commit closes two files (data and WAL segment).
const firstCloseRetryWait = 5 * time.Millisecond

// Close completes the file. A "replicating" answer means every DataNode has
// acknowledged the data but the NameNode has not yet seen the minimum
// replication; the file is not complete until it has, so retry with backoff.
// Any other failure is final: see file.broken. So is the end of Create's
// context.
func (f *file) Close() error {
	if f.closed {
		return nil
	}
	if f.broken != nil {
		f.release()
		return f.broken
	}
	if f.ctx.Err() != nil {
		return f.interrupted("close", false)
	}
	f.released = true
	wait := firstCloseRetryWait
	var err error
	for i := 0; i <= f.retries; i++ {
		var ok bool
		_, err, ok = await(f.ctx, f.c, none(f.w.Close), nil)
		if !ok {
			return f.interrupted("close", true)
		}
		if err == nil || !hdfs.IsErrReplicating(err) {
			break
		}
		if !sleep(f.ctx, wait) {
			return f.interrupted("close", true)
		}
		wait = min(2*wait, 2*time.Second)
	}
	if err != nil {
		if !hdfs.IsErrReplicating(err) {
			err = explainPipeline(err)
			f.broken = fmt.Errorf("%w (the file cannot be completed)", err)
		}
		return err
	}
	f.closed = true
	return nil
}

// sleep waits d, or less when ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// release closes the client's writer of a broken file, once: without it
// the block stream's heartbeat goroutine ran for as long as the process.
// What it answers is ignored: the file is broken either way.
func (f *file) release() {
	if !f.released {
		f.released = true
		_ = f.w.Close()
	}
}
