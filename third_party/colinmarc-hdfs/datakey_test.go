package hdfs

// hdfs-sink's tests of datakey.go (see FORK.md).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_common"
	"github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"github.com/colinmarc/hdfs/v2/internal/transfer"
)

// namenode hands out keys with a fresh nonce each, expiring at expiry
// (after noKeys answers of no key at all), counting the requests.
type namenode struct {
	expiry time.Time
	noKeys int32 // the first answers that hand out no key
	asked  atomic.Int32
}

func (n *namenode) fetch() (*hadoop_hdfs.DataEncryptionKeyProto, error) {
	i := n.asked.Add(1)
	if i <= n.noKeys {
		return nil, nil
	}
	ms := uint64(n.expiry.UnixNano() / int64(time.Millisecond))
	return &hadoop_hdfs.DataEncryptionKeyProto{Nonce: []byte(fmt.Sprint("nonce-", i)), ExpiryDate: &ms}, nil
}

// TestDataKeyRenewedAtExpiry: a key serves until its expiry date and is
// fetched again after it. Upstream kept the first key for the client's life.
func TestDataKeyRenewedAtExpiry(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	nn := &namenode{expiry: t0.Add(10 * time.Minute)}
	var k dataKeys
	first, _ := k.get(t0, nn.fetch)
	for _, at := range []time.Duration{0, time.Minute, 10*time.Minute - time.Millisecond} {
		if key, _ := k.get(t0.Add(at), nn.fetch); key != first {
			t.Fatalf("at +%v: a new key before the expiry date", at)
		}
	}
	nn.expiry = t0.Add(20 * time.Minute)
	renewed, _ := k.get(t0.Add(10*time.Minute), nn.fetch)
	if renewed == first || nn.asked.Load() != 2 {
		t.Fatalf("at the expiry date: key renewed %v, %d requests; want a new key, 2 requests", renewed != first, nn.asked.Load())
	}
}

// TestNoDataKeyIsKept: a NameNode without dfs.encrypt.data.transfer hands
// out no key; that answer is kept (one request, not one per block) as an
// empty key, which the SASL dialer reads as none.
func TestNoDataKeyIsKept(t *testing.T) {
	nn := &namenode{noKeys: 1 << 30}
	var k dataKeys
	for i := 0; i < 5; i++ {
		key, err := k.get(time.Now().Add(time.Duration(i)*time.Hour), nn.fetch)
		if err != nil || key == nil || len(key.Nonce) != 0 {
			t.Fatalf("get: %v, %v; want an empty key", key, err)
		}
	}
	if nn.asked.Load() != 1 {
		t.Fatalf("%d requests for no key, want 1", nn.asked.Load())
	}
}

// TestDataKeySharedByConcurrentBlocks: blocks starting at once share one
// request and one key (run with -race: upstream's plain field raced).
func TestDataKeySharedByConcurrentBlocks(t *testing.T) {
	nn := &namenode{expiry: time.Now().Add(time.Hour)}
	var k dataKeys
	var wg sync.WaitGroup
	keys := make([]*hadoop_hdfs.DataEncryptionKeyProto, 32)
	for i := range keys {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			keys[i], _ = k.get(time.Now(), nn.fetch)
		}(i)
	}
	wg.Wait()
	for _, key := range keys {
		if key != keys[0] {
			t.Fatal("concurrent blocks got different keys")
		}
	}
	if nn.asked.Load() != 1 {
		t.Fatalf("%d requests, want 1", nn.asked.Load())
	}
}

// TestDataKeyFetchFailure: a failed request is the dial's error and
// leaves nothing cached.
func TestDataKeyFetchFailure(t *testing.T) {
	var k dataKeys
	boom := errors.New("namenode down")
	if _, err := k.get(time.Now(), func() (*hadoop_hdfs.DataEncryptionKeyProto, error) { return nil, boom }); err != boom {
		t.Fatalf("err %v, want %v", err, boom)
	}
	if k.key != nil {
		t.Fatal("a failed request left a key cached")
	}
}

// TestKeyedDialRetriesWithAFreshKey: a DataNode that refuses the key
// (ERROR_UNKNOWN_KEY: it dropped its block key; or any refusal of no key:
// the cluster turned encryption on since the client heard "no key") gets
// one more handshake with a fresh key; the same key again, no key again, a
// refusal of a key the DataNode knows, a broken reply, an unreachable or
// hung DataNode and an ended context are not retried. Every connection a
// failed handshake made is closed.
func TestKeyedDialRetriesWithAFreshKey(t *testing.T) {
	unknownKey := &transfer.HandshakeRefusedError{Addr: "dn:9866", Status: hadoop_hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY,
		Message: "Can't re-compute encryption key for nonce, since the required block key (keyID=1234) doesn't exist. Current key: 5678"}
	refused := &transfer.HandshakeRefusedError{Addr: "dn:9866", Status: hadoop_hdfs.DataTransferEncryptorMessageProto_ERROR,
		Message: "DIGEST-MD5: IO error acquiring password"}
	unreachable := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	hung := &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}
	for _, tc := range []struct {
		name      string
		noKeys    int32   // the NameNode's first answers that hand out no key
		answers   []error // the DataNode's, handshake by handshake (then: accepted)
		wantDials int
		wantErr   bool
		ended     bool // the dial's context has ended
	}{
		{name: "accepted", wantDials: 1},
		{name: "stale key, then a fresh one", answers: []error{unknownKey}, wantDials: 2},
		{name: "stale key, wrapped", answers: []error{fmt.Errorf("dialing: %w", unknownKey)}, wantDials: 2},
		{name: "stale key twice", answers: []error{unknownKey, unknownKey}, wantDials: 2, wantErr: true},
		{name: "no key, and still none", noKeys: 1 << 30, answers: []error{refused}, wantDials: 1, wantErr: true},
		{name: "no key, then encryption turned on", noKeys: 1, answers: []error{refused}, wantDials: 2},
		{name: "a key the DataNode knows, refused", answers: []error{refused}, wantDials: 1, wantErr: true},
		{name: "reply cut short", answers: []error{io.ErrUnexpectedEOF}, wantDials: 1, wantErr: true},
		{name: "reply not the digest's", answers: []error{errors.New("rspauth did not match digest")}, wantDials: 1, wantErr: true},
		{name: "unreachable DataNode", answers: []error{unreachable}, wantDials: 1, wantErr: true},
		{name: "hung DataNode", answers: []error{hung}, wantDials: 1, wantErr: true},
		{name: "stale key, context ended", answers: []error{unknownKey}, wantDials: 1, wantErr: true, ended: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nn := &namenode{expiry: time.Now().Add(time.Hour), noKeys: tc.noKeys}
			var nonces []string
			var opened []net.Conn
			dn := func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, s := net.Pipe()
				s.SetReadDeadline(time.Now().Add(5 * time.Second))
				go io.Copy(io.Discard, s)
				opened = append(opened, s)
				return c, nil
			}
			defer stubKeyedDial(nn, func(key *hadoop_hdfs.DataEncryptionKeyProto) error {
				nonces = append(nonces, string(key.Nonce))
				if len(nonces) <= len(tc.answers) {
					return tc.answers[len(nonces)-1]
				}
				return nil
			})()
			ctx, cancel := context.WithCancel(context.Background())
			if tc.ended {
				cancel()
			}
			defer cancel()
			conn, err := (&Client{}).keyedDial(dn, nil)(ctx, "tcp", "dn:9866")
			if (err != nil) != tc.wantErr || len(nonces) != tc.wantDials {
				t.Fatalf("err %v after dials with nonces %q; want error %v after %d dials", err, nonces, tc.wantErr, tc.wantDials)
			}
			if len(nonces) == 2 && nonces[0] == nonces[1] {
				t.Fatalf("retried with the same key %q", nonces[0])
			}
			for i, s := range opened {
				s.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
				_, werr := s.Write([]byte("x")) // io.ErrClosedPipe once the client's end is closed
				closed := errors.Is(werr, io.ErrClosedPipe)
				if last := i == len(opened)-1; closed == (last && conn != nil) {
					t.Errorf("connection %d of %d: closed %v after the dial (dial err %v)", i+1, len(opened), closed, err)
				}
			}
			if conn != nil {
				conn.Close()
			}
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// stubKeyedDial stands nn in for the NameNode and handshake for the
// DataNode's answer to a handshake over a connection dialled with the
// given dial function; the returned function restores both.
func stubKeyedDial(nn *namenode, handshake func(*hadoop_hdfs.DataEncryptionKeyProto) error) func() {
	oldDial, oldRequest := saslDial, requestKey
	saslDial = func(ctx context.Context, _ *Client, dc dialContext, _ *hadoop_common.TokenProto, key *hadoop_hdfs.DataEncryptionKeyProto, network, addr string) (net.Conn, error) {
		if err := handshake(key); err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				return nil, err // nothing was connected
			}
			dc(ctx, network, addr) // connected, then refused
			return nil, err
		}
		return dc(ctx, network, addr)
	}
	requestKey = func(*Client) (*hadoop_hdfs.DataEncryptionKeyProto, error) { return nn.fetch() }
	return func() { saslDial, requestKey = oldDial, oldRequest }
}
