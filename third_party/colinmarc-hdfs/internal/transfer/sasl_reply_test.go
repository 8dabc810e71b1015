package transfer

// hdfs-sink's tests of sasl_reply.go (see FORK.md).

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"github.com/colinmarc/hdfs/v2/internal/sasl"
)

// TestSaslDialerReadsDataNodeStatus: a DataNode that refuses the handshake,
// at either step, with each status, is a *HandshakeRefusedError carrying
// its address, status and message. Upstream read the refusal as a success
// with an empty payload (its errors: an invalid challenge, or no rspauth),
// and a refusal of fewer than 5 bytes not at all (it waited for 5: a
// timeout).
func TestSaslDialerReadsDataNodeStatus(t *testing.T) {
	const (
		unknownKey = "Can't re-compute encryption key for nonce, since the required block key (keyID=1234) doesn't exist. Current key: 5678"
		mismatch   = "DIGEST-MD5: digest response format violation. Mismatched response."
		badName    = "Provided name 'YmxvY2s=' has 1 components instead of the expected 3."
	)
	refusal := func(status hdfs.DataTransferEncryptorMessageProto_DataTransferEncryptorStatus, message string) *hdfs.DataTransferEncryptorMessageProto {
		m := &hdfs.DataTransferEncryptorMessageProto{Status: status.Enum()}
		if message != "" {
			m.Message = proto.String(message)
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		step1  *hdfs.DataTransferEncryptorMessageProto
		final  *hdfs.DataTransferEncryptorMessageProto
		status hdfs.DataTransferEncryptorMessageProto_DataTransferEncryptorStatus
		msg    string
	}{
		{name: "ERROR_UNKNOWN_KEY for the digest", final: refusal(hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY, unknownKey),
			status: hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY, msg: unknownKey},
		{name: "ERROR for the digest", final: refusal(hdfs.DataTransferEncryptorMessageProto_ERROR, mismatch),
			status: hdfs.DataTransferEncryptorMessageProto_ERROR, msg: mismatch},
		{name: "ERROR instead of the challenge", step1: refusal(hdfs.DataTransferEncryptorMessageProto_ERROR, badName),
			status: hdfs.DataTransferEncryptorMessageProto_ERROR, msg: badName},
		{name: "ERROR_UNKNOWN_KEY instead of the challenge", step1: refusal(hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY, unknownKey),
			status: hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY, msg: unknownKey},
		{name: "ERROR without a message (3 bytes)", final: refusal(hdfs.DataTransferEncryptorMessageProto_ERROR, ""),
			status: hdfs.DataTransferEncryptorMessageProto_ERROR},
		{name: "ERROR_UNKNOWN_KEY without a message, instead of the challenge", step1: refusal(hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY, ""),
			status: hdfs.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY},
		{name: "SUCCESS", status: hdfs.DataTransferEncryptorMessageProto_SUCCESS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dn := &fakeDataNode{qop: sasl.QopPrivacy, step1: tc.step1, final: func(h *serverHandshake) *hdfs.DataTransferEncryptorMessageProto {
				if tc.final != nil {
					return tc.final
				}
				return &hdfs.DataTransferEncryptorMessageProto{Status: hdfs.DataTransferEncryptorMessageProto_SUCCESS.Enum(), Payload: h.rspauth()}
			}}
			conn, err := dn.dial(t, "10.0.0.5:9866")
			if conn != nil {
				conn.Close()
			}
			if tc.status == hdfs.DataTransferEncryptorMessageProto_SUCCESS {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				return
			}
			var refused *HandshakeRefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("dial: %v; want the DataNode's refusal", err)
			}
			if refused.Status != tc.status || refused.Message != tc.msg || refused.Addr != "10.0.0.5:9866" {
				t.Fatalf("refusal %+v; want %v, %q from 10.0.0.5:9866", refused, tc.status, tc.msg)
			}
			want := "datanode 10.0.0.5:9866 refused the SASL handshake: " + tc.status.String()
			if tc.msg != "" {
				want += ": " + tc.msg
			}
			if err.Error() != want {
				t.Fatalf("error %q; want %q", err, want)
			}
		})
	}
}
