package transfer

// This file is hdfs-sink's (see FORK.md): the DataNode's replies in the
// SASL handshake, read with their status.

import (
	"fmt"
	"io"
	"net"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
)

// HandshakeRefusedError is a DataNode's refusal of the SASL handshake: the
// status of its reply (ERROR_UNKNOWN_KEY: it no longer holds the block key
// the data encryption key was made from, Hadoop's
// InvalidEncryptionKeyException; ERROR: anything else) and its message.
type HandshakeRefusedError struct {
	Addr    string
	Status  hdfs.DataTransferEncryptorMessageProto_DataTransferEncryptorStatus
	Message string
}

func (e *HandshakeRefusedError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("datanode %s refused the SASL handshake: %s", e.Addr, e.Status)
	}
	return fmt.Sprintf("datanode %s refused the SASL handshake: %s: %s", e.Addr, e.Status, e.Message)
}

// readSaslReply reads one handshake message from the DataNode into msg and
// returns a *HandshakeRefusedError when its status is not SUCCESS.
// Upstream's readPrefixedMessage ignored the status, so a refusal went on
// as an empty challenge or an empty rspauth, and the error said so; and it
// waited for at least 5 bytes, more than a refusal with a short message
// holds (the DataNode sends nothing after it). The message is read as
// every block-operation reply is (readBlockOpMessage: the length a byte at
// a time, at most 1 MiB).
func readSaslReply(conn net.Conn, msg *hdfs.DataTransferEncryptorMessageProto) error {
	if err := readBlockOpMessage(conn, msg); err != nil {
		return err
	}
	if msg.GetStatus() != hdfs.DataTransferEncryptorMessageProto_SUCCESS {
		return &HandshakeRefusedError{Addr: datanodeAddr(conn), Status: msg.GetStatus(), Message: msg.GetMessage()}
	}
	return nil
}

type byteAtATime struct{ io.Reader }

func (r byteAtATime) ReadByte() (byte, error) {
	var b [1]byte
	_, err := io.ReadFull(r.Reader, b[:])
	return b[0], err
}
