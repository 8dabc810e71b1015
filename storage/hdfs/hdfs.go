// Package hdfs owns the HDFS backend of storage.FS, on github.com/colinmarc/hdfs/v2.
//
// The client has no hflush/hsync and no lease recovery, and Rename overwrites a
// destination file: the commit protocol is built so it needs none of those
// (see docs/design.md). What this package adds on top of the client is only
// what storage.FS promises: parents created on Create, Close retried while the
// NameNode reports the last block still replicating, and names resolved under
// the URL's path.
package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
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
	clients []*hdfs.Client
	next    atomic.Uint32
	base    string
	opts    Options
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
	f := &FS{base: path.Clean("/" + u.Path), opts: opts}
	for range opts.Connections {
		c, err := connect(copts, opts.URL)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.clients = append(f.clients, c)
	}
	return f, nil
}

func connect(copts hdfs.ClientOptions, url string) (*hdfs.Client, error) {
	c, err := hdfs.NewClient(copts)
	if err != nil {
		return nil, fmt.Errorf("connect to HDFS %s: %w", url, authError(copts, err))
	}
	// The client caches the server defaults on first use without a lock;
	// fetch them now, before partitions use the client concurrently.
	if _, err := c.ServerDefaults(); err != nil {
		c.Close()
		return nil, fmt.Errorf("HDFS %s: get server defaults: %w", url, authError(copts, err))
	}
	return c, nil
}

// client picks the next NameNode connection. Any of them may act on any
// path: the NameNode orders all calls, whichever connection carries them.
// A file is completed through the connection that created it (its lease
// holder), which the FileWriter remembers.
func (f *FS) client() *hdfs.Client {
	return f.clients[int(f.next.Add(1)%uint32(len(f.clients)))]
}

// clientOptions resolves the NameNodes (Resolve: exactly the URL's
// nameservice's, never another's), takes the client's other settings
// (data transfer protection, DataNode host names, Kerberos) from
// hadoop.conf.dir as colinmarc/hdfs reads them, and says what security
// they amount to. colinmarc's own NameNode list is not used: it holds
// every nameservice's NameNodes.
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
	dial := dialer(orDefault(opts.DialTimeout, 10*time.Second), orDefault(opts.IOTimeout, DefaultIOTimeout))
	copts.NamenodeDialFunc, copts.DatanodeDialFunc = dial, dial
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
// file's Write and Close check ctx.
func (f *FS) Create(ctx context.Context, name string) (storage.File, error) {
	p := f.abs(name)
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "create", p)
	}
	c := f.client()
	w, err := withParent(c, p, func() (*hdfs.FileWriter, error) { return c.Create(p) })
	if err != nil {
		return nil, err
	}
	return &file{w: w, ctx: ctx, name: p, retries: f.opts.CloseRetries}, nil
}

// withParent runs op, and once more after creating the parent of p if op
// failed for want of it. Trying first saves the NameNode a lookup per call
// where the parent usually exists (a commit's renames and temp files):
// the NameNode's round trips, not bandwidth, bound how fast many
// partitions commit.
func withParent[T any](c *hdfs.Client, p string, op func() (T, error)) (T, error) {
	v, err := op()
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return v, err
	}
	if err := c.MkdirAll(path.Dir(p), 0o755); err != nil {
		return v, err
	}
	return op()
}

// Open opens name for reading.
func (f *FS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "open", f.abs(name))
	}
	r, err := f.client().Open(f.abs(name))
	if err != nil || f.opts.Kerberos == nil {
		return r, err
	}
	return explainingReader{r}, nil
}

// explainingReader adds explainRead's diagnosis to read errors.
type explainingReader struct{ io.ReadCloser }

func (r explainingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF {
		return n, err
	}
	return n, explainRead(err)
}

// Rename renames oldpath to newpath, creating newpath's parent.
func (f *FS) Rename(ctx context.Context, oldpath, newpath string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "rename", f.abs(oldpath))
	}
	np := f.abs(newpath)
	c := f.client()
	_, err := withParent(c, np, func() (struct{}, error) { return struct{}{}, c.Rename(f.abs(oldpath), np) })
	return err
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "remove", f.abs(name))
	}
	return f.client().Remove(f.abs(name))
}

// RemoveAll removes a tree; a missing name is not an error.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "removeall", f.abs(name))
	}
	return f.client().RemoveAll(f.abs(name))
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "readdir", f.abs(name))
	}
	return f.client().ReadDir(f.abs(name))
}

// Stat describes name.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if ctx.Err() != nil {
		return nil, storage.Interrupted(ctx, "stat", f.abs(name))
	}
	return f.client().Stat(f.abs(name))
}

// MkdirAll creates a directory and its parents.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	if ctx.Err() != nil {
		return storage.Interrupted(ctx, "mkdir", f.abs(name))
	}
	return f.client().MkdirAll(f.abs(name), 0o755)
}

// Close closes the NameNode connections; leases of open files lapse.
func (f *FS) Close() error {
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
	ctx     context.Context // Create's: Write and Close check it
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
	// released: the client's Close has run once, which stops the block
	// stream's goroutines and closes its DataNode connection, whatever
	// the outcome. A broken file is still released, once.
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
		f.broken = storage.Interrupted(f.ctx, "write", f.name)
		return 0, f.broken
	}
	n, err := f.w.Write(p)
	if err != nil {
		f.broken = fmt.Errorf("%w (the file cannot be completed)", err)
	}
	return n, err
}

// firstCloseRetryWait is short because the wait is usually short: on the
// test environment a small file's first "complete" failed about half the
// time and one 2 ms wait was enough, so a 50 ms first wait added ~25 ms to
// every close, and each commit closes two files (data and WAL segment).
const firstCloseRetryWait = 5 * time.Millisecond

// Close completes the file. A "replicating" answer means every DataNode has
// acknowledged the data but the NameNode has not yet seen the minimum
// replication; the file is not complete until it has, so retry with backoff.
// Any other failure is final: see file.broken.
func (f *file) Close() error {
	if f.closed {
		return nil
	}
	if f.broken == nil && f.ctx.Err() != nil {
		f.broken = storage.Interrupted(f.ctx, "close", f.name)
	}
	if f.broken != nil {
		f.release()
		return f.broken
	}
	f.released = true
	wait := firstCloseRetryWait
	var err error
	for i := 0; i <= f.retries; i++ {
		if err = f.w.Close(); err == nil || !hdfs.IsErrReplicating(err) {
			break
		}
		time.Sleep(wait)
		wait = min(2*wait, 2*time.Second)
	}
	if err != nil {
		if !hdfs.IsErrReplicating(err) {
			f.broken = fmt.Errorf("%w (the file cannot be completed)", err)
		}
		return err
	}
	f.closed = true
	return nil
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
