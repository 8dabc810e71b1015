package transfer

// This file is hdfs-sink's (see FORK.md): length checks on what a DataNode
// sends during and after the DIGEST-MD5 handshake. Upstream sliced those
// bytes at the lengths it expected, so a short message from the network was
// a panic, and a panic in a DataNode connection ends the whole process.

import (
	"crypto/aes"
	"fmt"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
)

// checkWrappedLen refuses a wrapped message (a frame's body, or a key the
// DataNode wrapped in its last handshake message) too short to hold the
// 16-byte trailer decode slices off its end. Upstream checked only for 4
// bytes, and decode panicked on 4 to 15.
func checkWrappedLen(n int) error {
	if n < wrappedTrailerLen {
		return fmt.Errorf("digest-md5: wrapped message of %d bytes, shorter than its %d-byte trailer", n, wrappedTrailerLen)
	}
	return nil
}

// errNoRspauthValue: the DataNode's last handshake payload is "rspauth"
// with no "=value" (challengeStep2 read the value at index 1 unchecked: a
// panic).
func errNoRspauthValue(payload []byte) error {
	return fmt.Errorf("digest-md5: the DataNode's final message %q has no rspauth value", payload)
}

// checkCipherOption refuses an AES cipher option whose wrapped keys cannot
// hold their trailer or whose IVs are not one AES block: crypto/cipher's
// NewCTR panics on such an IV.
func checkCipherOption(c *hdfs.CipherOptionProto) error {
	for _, k := range []struct {
		name string
		b    []byte
	}{{"inKey", c.GetInKey()}, {"outKey", c.GetOutKey()}} {
		if len(k.b) < wrappedTrailerLen {
			return fmt.Errorf("digest-md5: the DataNode's wrapped AES %s is %d bytes, shorter than its %d-byte trailer", k.name, len(k.b), wrappedTrailerLen)
		}
	}
	for _, iv := range []struct {
		name string
		b    []byte
	}{{"inIv", c.GetInIv()}, {"outIv", c.GetOutIv()}} {
		if len(iv.b) != aes.BlockSize {
			return fmt.Errorf("digest-md5: the DataNode's AES %s is %d bytes, not %d", iv.name, len(iv.b), aes.BlockSize)
		}
	}
	return nil
}
