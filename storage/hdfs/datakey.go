package hdfs

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/colinmarc/hdfs/v2"
)

// errKeyCache: the client no longer has the cache settleDataKey fills (a
// changed library version); TestSettleDataKey fails first.
var errKeyCache = errors.New("hdfs client: no encryptionKey cache field to settle (library version changed?)")

// settleDataKey fills the client's data-encryption-key cache before the
// client is shared between partitions.
//
// With data transfer protection, every block a client starts to write or
// read asks the client for the NameNode's data encryption key. The library
// caches the key on first use in a plain field, without a lock, so two
// partitions starting blocks at once race (the race detector saw it in the
// Kerberos long run). When the NameNode does not encrypt data transfer
// (dfs.encrypt.data.transfer=false, the usual setting beside
// dfs.data.transfer.protection) it hands out no key: the cache stays empty,
// every block asks the NameNode again and writes the field again. An empty
// key is what the library's SASL dialer reads as "no key" (it uses a key only
// with a nonce), so settling the cache with one changes no handshake: it
// removes the race and one NameNode call per block.
//
// With dfs.encrypt.data.transfer=true the key is real and only the NameNode
// has it; the library fetches it on first use and the field is read-only
// after that (docs/kerberos.md says what is left).
func settleDataKey(c *hdfs.Client, protected bool, d hdfs.ServerDefaults) error {
	if !protected || d.EncryptDataTransfer {
		return nil
	}
	f := reflect.ValueOf(c).Elem().FieldByName("encryptionKey")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type().Elem().Kind() != reflect.Struct {
		return errKeyCache
	}
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	if f.IsNil() {
		f.Set(reflect.New(f.Type().Elem()))
	}
	return nil
}
