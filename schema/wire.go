package schema

import "encoding/binary"

// WireHeaderLen is the size of the Confluent framing: magic byte + 4-byte id.
const WireHeaderLen = 5

const wireMagic = 0

// ParseWire splits a Confluent-framed value into its schema id and the
// binary Avro datum. The datum aliases b.
func ParseWire(b []byte) (id int32, datum []byte, err error) {
	switch {
	case len(b) == 0:
		return 0, nil, &FrameError{Reason: ReasonEmpty}
	case b[0] != wireMagic:
		return 0, nil, &FrameError{Reason: ReasonMagic, Len: len(b), Magic: b[0]}
	case len(b) < WireHeaderLen:
		return 0, nil, &FrameError{Reason: ReasonTooShort, Len: len(b)}
	}
	return int32(binary.BigEndian.Uint32(b[1:WireHeaderLen])), b[WireHeaderLen:], nil
}

// AppendWire appends the Confluent framing of datum under id to dst; the
// inverse of ParseWire, for producers in tests and the demo.
func AppendWire(dst []byte, id int32, datum []byte) []byte {
	dst = append(dst, wireMagic)
	dst = binary.BigEndian.AppendUint32(dst, uint32(id))
	return append(dst, datum...)
}
