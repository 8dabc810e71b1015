package hdfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// timeoutConn bounds every read and write on a connection to a NameNode or
// DataNode: colinmarc/hdfs sets no deadline on NameNode calls, so a hung
// NameNode (a long GC pause, SIGSTOP, a partition that drops packets) made
// every call wait forever, silently, with the client's lock held.
//
// A read is only issued while an answer is due (a NameNode reply, a
// DataNode's ack of a packet in flight), so a per-operation deadline never
// fires on an idle connection.
//
// After any error the connection is closed. The client keeps the
// connection after a failed read; a reply that arrives after a timeout
// would then be read as the reply to the next call, and every call after
// it would fail ("unexpected sequence number"). Closed, the next call's
// write fails and the client dials again.
type timeoutConn struct {
	net.Conn
	timeout time.Duration
	mu      sync.Mutex
	cause   error                // what closed the connection; nil while it is open
	onClose func(c *timeoutConn) // nil: nobody to tell
}

func (c *timeoutConn) Read(p []byte) (int, error) {
	if err := c.closedBy(); err != nil {
		return 0, err
	}
	if err := c.setDeadline(c.Conn.SetReadDeadline); err != nil {
		return 0, c.fail(err)
	}
	n, err := c.Conn.Read(p)
	return n, c.fail(err)
}

func (c *timeoutConn) Write(p []byte) (int, error) {
	if err := c.closedBy(); err != nil {
		return 0, err
	}
	if err := c.setDeadline(c.Conn.SetWriteDeadline); err != nil {
		return 0, c.fail(err)
	}
	n, err := c.Conn.Write(p)
	return n, c.fail(err)
}

// setDeadline sets the next operation's deadline with set; no timeout: none.
func (c *timeoutConn) setDeadline(set func(time.Time) error) error {
	if c.timeout <= 0 {
		return nil
	}
	return set(time.Now().Add(c.timeout))
}

// closedBy is, once the connection is closed, the error that closed it:
// the client reports the error of the call that finds the connection
// closed ("no available namenodes: …"), and "use of closed network
// connection" would hide why (a timeout, a reset).
func (c *timeoutConn) closedBy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause == nil {
		return nil
	}
	return fmt.Errorf("connection closed after %w", c.cause)
}

// SetDeadline lets the client's own deadline (zero: none) stand; each
// operation then sets its own, so nothing waits longer than the timeout.
func (c *timeoutConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(t) }

// fail closes the connection after err. An operation that fails because
// the connection was closed under it (the store's Close) reports why.
func (c *timeoutConn) fail(err error) error {
	if err == nil || c.closeFor(err) {
		return err
	}
	return c.closedBy()
}

// closeFor closes the connection for cause, once; false when it was
// closed already.
func (c *timeoutConn) closeFor(cause error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil {
		return false
	}
	c.cause = cause
	c.Conn.Close()
	if c.onClose != nil {
		c.onClose(c)
	}
	return true
}

// Close closes the connection; closing it again, or after an error closed
// it, is not an error (the client closes what the store has closed).
func (c *timeoutConn) Close() error {
	c.closeFor(net.ErrClosed)
	return nil
}

// errStoreClosed is what a connection closed by the store's Close says,
// and what a dial after it answers.
var errStoreClosed = errors.New("the HDFS store was closed")

// dialer dials the NameNode and DataNode connections of one store; they
// time out after timeout, and it keeps the live ones so that the store's
// Close can end calls still under way, a call its context stopped waiting
// for included (await).
type dialer struct {
	net     net.Dialer
	timeout time.Duration
	mu      sync.Mutex
	live    map[*timeoutConn]struct{}
	closed  bool
}

func newDialer(dialTimeout, timeout time.Duration) *dialer {
	return &dialer{net: net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}, timeout: timeout, live: map[*timeoutConn]struct{}{}}
}

// dial is the dial function handed to colinmarc/hdfs.
func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	raw, err := d.net.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &timeoutConn{Conn: raw, timeout: d.timeout, onClose: d.forget}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		raw.Close()
		return nil, fmt.Errorf("dial %s: %w", addr, errStoreClosed)
	}
	d.live[c] = struct{}{}
	return c, nil
}

func (d *dialer) forget(c *timeoutConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.live, c)
}

// closeAll closes every live connection, which ends the reads and writes
// blocked on them, and refuses dials from then on.
func (d *dialer) closeAll() {
	d.mu.Lock()
	d.closed = true
	live := make([]*timeoutConn, 0, len(d.live))
	for c := range d.live {
		live = append(live, c)
	}
	d.mu.Unlock()
	for _, c := range live {
		c.closeFor(errStoreClosed)
	}
}
