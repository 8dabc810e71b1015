package transfer

// hdfs-sink's tests of digest_md5_checks.go (see FORK.md): bytes from a
// DataNode shorter than upstream expected are errors, never panics.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"github.com/colinmarc/hdfs/v2/internal/sasl"
)

// TestDecodeRefusesShortWrappedMessages: decode of a wrapped message too
// short for its 16-byte trailer. Upstream checked for 4 bytes only: from 4
// to 15 the integrity decode sliced input[:len-16] and the privacy decode
// input[:len-6] or input[len-16:len-6], all panics.
func TestDecodeRefusesShortWrappedMessages(t *testing.T) {
	for _, n := range []int{0, 3, 4, 5, 6, 9, 15} {
		for _, p := range pairs {
			t.Run(fmt.Sprintf("%d bytes/%s", n, p.name), func(t *testing.T) {
				want := fmt.Sprintf("wrapped message of %d bytes, shorter than its 16-byte trailer", n)
				err := func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("panic: %v", r)
						}
					}()
					_, err = p.client(nil).decode(bytes.Repeat([]byte{7}, n))
					return err
				}()
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("decode: %v; want an error %q", err, want)
				}
			})
		}
	}
}

// TestSaslDialerRefusesMalformedReplies: a DataNode's last handshake
// message that is too short where upstream sliced it (rspauth without its
// value, wrapped AES keys shorter than their trailer, IVs that are not one
// AES block, a length past any handshake message) is the dial's error.
// Upstream panicked on each but the missing outKey (an error naming no
// field) and the 2 MiB reply (allocated for, then waited on); the
// well-formed rows check the fake DataNode.
func TestSaslDialerRefusesMalformedReplies(t *testing.T) {
	ok := func(h *serverHandshake) *hdfs.DataTransferEncryptorMessageProto {
		return &hdfs.DataTransferEncryptorMessageProto{Status: hdfs.DataTransferEncryptorMessageProto_SUCCESS.Enum(), Payload: h.rspauth()}
	}
	// withAES is a well-formed reply with an AES cipher option, then edit.
	withAES := func(edit func(*hdfs.CipherOptionProto)) func(*serverHandshake) *hdfs.DataTransferEncryptorMessageProto {
		return func(h *serverHandshake) *hdfs.DataTransferEncryptorMessageProto {
			keys := h.wrap(bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16))
			opt := &hdfs.CipherOptionProto{
				Suite:  hdfs.CipherSuiteProto_AES_CTR_NOPADDING.Enum(),
				InKey:  keys[0],
				OutKey: keys[1],
				InIv:   bytes.Repeat([]byte{3}, 16),
				OutIv:  bytes.Repeat([]byte{4}, 16),
			}
			edit(opt)
			m := ok(h)
			m.CipherOption = []*hdfs.CipherOptionProto{opt}
			return m
		}
	}
	for _, tc := range []struct {
		name  string
		qop   string
		final func(*serverHandshake) *hdfs.DataTransferEncryptorMessageProto
		raw   []byte
		want  string // "": the handshake succeeds
	}{
		{name: "rspauth without its value", qop: sasl.QopAuthentication,
			final: func(*serverHandshake) *hdfs.DataTransferEncryptorMessageProto {
				return &hdfs.DataTransferEncryptorMessageProto{Status: hdfs.DataTransferEncryptorMessageProto_SUCCESS.Enum(), Payload: []byte("rspauth")}
			},
			want: `the DataNode's final message "rspauth" has no rspauth value`},
		{name: "integrity: inKey of 9 bytes", qop: sasl.QopIntegrity,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.InKey = o.InKey[:9] }),
			want:  "wrapped AES inKey is 9 bytes, shorter than its 16-byte trailer"},
		{name: "integrity: outKey of 15 bytes", qop: sasl.QopIntegrity,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.OutKey = o.OutKey[:15] }),
			want:  "wrapped AES outKey is 15 bytes, shorter than its 16-byte trailer"},
		{name: "privacy: inKey of 5 bytes", qop: sasl.QopPrivacy,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.InKey = o.InKey[:5] }),
			want:  "wrapped AES inKey is 5 bytes, shorter than its 16-byte trailer"},
		{name: "privacy: inKey of 12 bytes", qop: sasl.QopPrivacy,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.InKey = o.InKey[:12] }),
			want:  "wrapped AES inKey is 12 bytes, shorter than its 16-byte trailer"},
		{name: "privacy: no outKey", qop: sasl.QopPrivacy,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.OutKey = nil }),
			want:  "wrapped AES outKey is 0 bytes, shorter than its 16-byte trailer"},
		{name: "privacy: inIv of 3 bytes", qop: sasl.QopPrivacy,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.InIv = o.InIv[:3] }),
			want:  "AES inIv is 3 bytes, not 16"},
		{name: "privacy: no outIv", qop: sasl.QopPrivacy,
			final: withAES(func(o *hdfs.CipherOptionProto) { o.OutIv = nil }),
			want:  "AES outIv is 0 bytes, not 16"},
		{name: "a reply of 2 MiB", qop: sasl.QopAuthentication,
			raw:  binary.AppendUvarint(nil, 2<<20),
			want: "DataTransferEncryptorMessageProto of 2097152 bytes, more than 1048576"},
		{name: "well-formed: authentication", qop: sasl.QopAuthentication, final: ok},
		{name: "well-formed: integrity", qop: sasl.QopIntegrity, final: ok},
		{name: "well-formed: privacy with AES", qop: sasl.QopPrivacy,
			final: withAES(func(*hdfs.CipherOptionProto) {})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := (&fakeDataNode{qop: tc.qop, final: tc.final, raw: tc.raw}).dial(t, "10.0.0.5:9866")
			if conn != nil {
				conn.Close()
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("dial: %v; want an error %q", err, tc.want)
			}
		})
	}
}
