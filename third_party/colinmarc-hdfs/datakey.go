package hdfs

// This file is hdfs-sink's (see FORK.md): the data encryption key, shared
// by the client's DataNode connections.

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_common"
	"github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"github.com/colinmarc/hdfs/v2/internal/transfer"
)

// dataKeys caches the NameNode's data encryption key. Upstream kept the
// first key in a plain field for the client's whole life: partitions
// starting blocks at once raced on it, and with dfs.encrypt.data.transfer
// the key outlived the block key it was made from, after which every
// DataNode refused it (hours later: dfs.block.access.token.lifetime). Like
// Hadoop's DFSClient, a key is used until its expiry date and then fetched
// again.
type dataKeys struct {
	mu  sync.Mutex
	key *hadoop_hdfs.DataEncryptionKeyProto
}

// get returns the cached key, fetching one when there is none or when it
// has expired at now. A NameNode that does not encrypt data transfer
// answers with no key; that answer is kept as an empty key, which the SASL
// dialer reads as none (it uses a key only with a nonce), so each block
// does not ask again.
func (k *dataKeys) get(now time.Time, fetch func() (*hadoop_hdfs.DataEncryptionKeyProto, error)) (*hadoop_hdfs.DataEncryptionKeyProto, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != nil && !expired(k.key, now) {
		return k.key, nil
	}
	key, err := fetch()
	if err != nil {
		return nil, err
	}
	if key == nil {
		key = &hadoop_hdfs.DataEncryptionKeyProto{}
	}
	k.key = key
	return key, nil
}

// forget drops key if it is still the cached one: the next get fetches.
func (k *dataKeys) forget(key *hadoop_hdfs.DataEncryptionKeyProto) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == key {
		k.key = nil
	}
}

// expired: a real key (one with a nonce) past its expiry date, which is in
// milliseconds since the epoch by the NameNode's clock.
func expired(key *hadoop_hdfs.DataEncryptionKeyProto, now time.Time) bool {
	return len(key.Nonce) > 0 && key.ExpiryDate != nil && now.UnixNano()/int64(time.Millisecond) >= int64(key.GetExpiryDate())
}

// requestKey asks the NameNode for a key (nil when it hands out none); a
// variable so that tests can stand in for the NameNode.
var requestKey = (*Client).requestDataEncryptionKey

func (c *Client) requestDataEncryptionKey() (*hadoop_hdfs.DataEncryptionKeyProto, error) {
	req := &hadoop_hdfs.GetDataEncryptionKeyRequestProto{}
	resp := &hadoop_hdfs.GetDataEncryptionKeyResponseProto{}
	if err := c.namenode.Execute("getDataEncryptionKey", req, resp); err != nil {
		return nil, err
	}
	return resp.GetDataEncryptionKey(), nil
}

// saslDial is one SASL-wrapped DataNode connection with key; a variable so
// that tests can stand in for the DataNode.
var saslDial = func(ctx context.Context, c *Client, dc dialContext, token *hadoop_common.TokenProto, key *hadoop_hdfs.DataEncryptionKeyProto, network, addr string) (net.Conn, error) {
	return (&transfer.SaslDialer{
		DialFunc:                  dc,
		Key:                       key,
		Token:                     token,
		EnforceQop:                c.options.DataTransferProtection,
		SkipSaslOnPrivilegedPorts: c.options.skipSaslForPrivilegedDatanodePorts,
	}).DialContext(ctx, network, addr)
}

// keyedDial dials DataNodes through SASL with the key current at each
// dial. When the DataNode refuses the key, the key is fetched again and, if
// the NameNode hands out another one, the handshake is tried once more with
// it: as DFSClient does on InvalidEncryptionKeyException (the DataNode no
// longer holds the key's block key: a NameNode restart, this host's clock
// behind the NameNode's), and for a cluster that turned
// dfs.encrypt.data.transfer on since the client last asked (no key then).
func (c *Client) keyedDial(dc dialContext, token *hadoop_common.TokenProto) dialContext {
	fetch := func() (*hadoop_hdfs.DataEncryptionKeyProto, error) { return requestKey(c) }
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		key, err := c.dataKeys.get(time.Now(), fetch)
		if err != nil {
			return nil, err
		}
		conn, err := dialClosingOnFailure(ctx, c, dc, token, key, network, addr)
		if err == nil || !keyRefused(ctx, err, key) {
			return conn, err
		}
		c.dataKeys.forget(key)
		fresh, ferr := c.dataKeys.get(time.Now(), fetch)
		if ferr != nil || len(fresh.Nonce) == 0 || bytes.Equal(fresh.Nonce, key.Nonce) {
			return nil, err
		}
		return dialClosingOnFailure(ctx, c, dc, token, fresh, network, addr)
	}
}

// dialClosingOnFailure is saslDial closing the connection it made when the
// handshake fails (upstream left it open, one descriptor per failed block).
func dialClosingOnFailure(ctx context.Context, c *Client, dc dialContext, token *hadoop_common.TokenProto, key *hadoop_hdfs.DataEncryptionKeyProto, network, addr string) (net.Conn, error) {
	if dc == nil {
		dc = (&net.Dialer{}).DialContext
	}
	var raw net.Conn
	remember := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dc(ctx, network, addr)
		raw = conn
		return conn, err
	}
	conn, err := saslDial(ctx, c, remember, token, key, network, addr)
	if err != nil && raw != nil {
		raw.Close()
	}
	return conn, err
}

// keyRefused: the DataNode refused the handshake (its reply's status, read
// by transfer.SaslDialer) because of the key sent: ERROR_UNKNOWN_KEY, or
// any refusal when no key was sent (a DataNode that now wants one answers
// ERROR: the name it got is not a key's). Nothing else is retried: not a
// DataNode that cannot be reached or stops answering, nor a context that
// ended, where a second try would only wait again, nor a refusal of a key
// the DataNode knows, or a broken reply, which a fresh key does not mend.
func keyRefused(ctx context.Context, err error, sent *hadoop_hdfs.DataEncryptionKeyProto) bool {
	var refused *transfer.HandshakeRefusedError
	if ctx.Err() != nil || !errors.As(err, &refused) {
		return false
	}
	return refused.Status == hadoop_hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY || len(sent.Nonce) == 0
}
