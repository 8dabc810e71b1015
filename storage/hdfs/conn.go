package hdfs

import (
	"context"
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
	cause   error // what closed the connection; nil while it is open
}

func (c *timeoutConn) Read(p []byte) (int, error) {
	if err := c.closedBy(); err != nil {
		return 0, err
	}
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, c.fail(err)
	}
	n, err := c.Conn.Read(p)
	return n, c.fail(err)
}

func (c *timeoutConn) Write(p []byte) (int, error) {
	if err := c.closedBy(); err != nil {
		return 0, err
	}
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, c.fail(err)
	}
	n, err := c.Conn.Write(p)
	return n, c.fail(err)
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

func (c *timeoutConn) fail(err error) error {
	if err == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause == nil {
		c.cause = err
		c.Conn.Close()
	}
	return err
}

// dialer returns a dial function whose connections time out after timeout.
func dialer(dialTimeout, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil || timeout <= 0 {
			return c, err
		}
		return &timeoutConn{Conn: c, timeout: timeout}, nil
	}
}
