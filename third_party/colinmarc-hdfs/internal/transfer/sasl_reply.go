package transfer

// This file is hdfs-sink's (see FORK.md): the DataNode's replies in the
// SASL handshake, read with their status.

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"

	"google.golang.org/protobuf/proto"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
)

// maxSaslReply bounds a handshake message's length as read from the wire: a
// challenge, or an rspauth with a cipher option, is a few hundred bytes, a
// refusal's text not much more.
const maxSaslReply = 1 << 20

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
// holds (the DataNode sends nothing after it). This reads the length a byte
// at a time and bounds it.
func readSaslReply(conn net.Conn, msg *hdfs.DataTransferEncryptorMessageProto) error {
	size, err := binary.ReadUvarint(byteAtATime{conn})
	if err == nil && size > maxSaslReply {
		err = fmt.Errorf("invalid response from datanode: SASL handshake message of %d bytes", size)
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(conn, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if err := proto.Unmarshal(b, msg); err != nil {
		return err
	}
	if msg.GetStatus() != hdfs.DataTransferEncryptorMessageProto_SUCCESS {
		addr := "?"
		if a := conn.RemoteAddr(); a != nil {
			addr = a.String()
		}
		return &HandshakeRefusedError{Addr: addr, Status: msg.GetStatus(), Message: msg.GetMessage()}
	}
	return nil
}

type byteAtATime struct{ io.Reader }

func (r byteAtATime) ReadByte() (byte, error) {
	var b [1]byte
	_, err := io.ReadFull(r.Reader, b[:])
	return b[0], err
}
