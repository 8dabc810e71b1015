package entry_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

func commit() entry.Entry {
	return entry.Entry{
		Kind: entry.KindCommit, Epoch: "e1", Owner: "h:1", Topic: "t", Partition: 3,
		CommittedOffset: 99, UnixMillis: 1700000000000,
		Files:   []entry.FileMove{{Temp: "/tmp/a", Final: "/t/a", StartOffset: 0, EndOffset: 99, Records: 100}},
		TopicID: [16]byte{0xa1, 15: 0xff}, Connector: "c", LeaderEpoch: 4, SchemaID: 7,
		MaxRecordMillis: 1700000000000,
	}
}

// legacyCommit is commit() as version 1 wrote it.
func legacyCommit() entry.Entry {
	e := commit()
	e.TopicID, e.Connector, e.LeaderEpoch, e.SchemaID, e.MaxRecordMillis, e.Legacy = [16]byte{}, "", -1, 0, 0, true
	return e
}

func TestRoundTrip(t *testing.T) {
	tests := map[string]entry.Entry{
		"claim":  {Kind: entry.KindClaim, Epoch: "ep", Owner: "host:42", Topic: "orders", Partition: 0, CommittedOffset: -1, UnixMillis: -5},
		"commit": commit(),
		"legacy": legacyCommit(),
		"refused claim": {Kind: entry.KindClaim, Epoch: "ep", Topic: "orders", CommittedOffset: 9, LeaderEpoch: -1,
			Refused: "topic orders was re-created"},
		"many files": {Kind: entry.KindCommit, Epoch: "x", Topic: "y", Partition: 2147483647, CommittedOffset: 1 << 62,
			Files: []entry.FileMove{{Temp: "a", Final: "b", EndOffset: 1 << 40}, {Temp: "ü", Final: "\x00", StartOffset: 7, EndOffset: 7, Records: 1}}},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := entry.Encode(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := entry.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(Encode(e)) = %+v, want %+v", got, want)
			}
		})
	}
}

// TestGolden pins the encodings: changing one breaks every WAL on disk.
// Version 1 is still read (WALs written before version 2) and re-encodes
// to its own bytes.
func TestGolden(t *testing.T) {
	const v1 = "01" + "02" + "026531" + "03683a31" + "0174" + "06" + "c601" +
		"80a0abfef962" + "01" + "062f746d702f61" + "042f742f61" + "00" + "c601" + "c801"
	v2 := "02" + v1[2:] + "a10000000000000000000000000000ff" + "0163" + "08" + "0e" + "00" + "80a0abfef962"
	for name, tc := range map[string]struct {
		e    entry.Entry
		want string
	}{"version 2": {commit(), v2}, "version 1": {legacyCommit(), v1}} {
		t.Run(name, func(t *testing.T) {
			b, err := entry.Encode(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(b); got != tc.want {
				t.Fatalf("encoding = %s, want %s", got, tc.want)
			}
			raw, _ := hex.DecodeString(tc.want)
			got, err := entry.Decode(raw)
			if err != nil || !reflect.DeepEqual(got, tc.e) {
				t.Fatalf("Decode = %+v, %v; want %+v", got, err, tc.e)
			}
		})
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	tests := map[string]func(*entry.Entry){
		"unknown kind":         func(e *entry.Entry) { e.Kind = 9 },
		"claim with files":     func(e *entry.Entry) { e.Kind = entry.KindClaim },
		"empty epoch":          func(e *entry.Entry) { e.Epoch = "" },
		"empty topic":          func(e *entry.Entry) { e.Topic = "" },
		"negative partition":   func(e *entry.Entry) { e.Partition = -1 },
		"offset below -1":      func(e *entry.Entry) { e.CommittedOffset = -2 },
		"empty temp":           func(e *entry.Entry) { e.Files[0].Temp = "" },
		"empty final":          func(e *entry.Entry) { e.Files[0].Final = "" },
		"end before start":     func(e *entry.Entry) { e.Files[0].StartOffset = 100 },
		"negative start":       func(e *entry.Entry) { e.Files[0].StartOffset = -1 },
		"negative records":     func(e *entry.Entry) { e.Files[0].Records = -1 },
		"refused commit":       func(e *entry.Entry) { e.Refused = "x" },
		"epoch below -1":       func(e *entry.Entry) { e.LeaderEpoch = -2 },
		"negative schema":      func(e *entry.Entry) { e.SchemaID = -1 },
		"negative record time": func(e *entry.Entry) { e.MaxRecordMillis = -1 },
		"legacy with record time": func(e *entry.Entry) {
			*e = legacyCommit()
			e.MaxRecordMillis = 1
		},
		"legacy with topic id": func(e *entry.Entry) {
			*e = legacyCommit()
			e.TopicID[0] = 1
		},
		"legacy with epoch": func(e *entry.Entry) {
			*e = legacyCommit()
			e.LeaderEpoch = 0
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			e := commit()
			mutate(&e)
			if _, err := entry.Encode(e); !errors.Is(err, entry.ErrInvalid) {
				t.Fatalf("Encode = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	valid, err := entry.Encode(commit())
	if err != nil {
		t.Fatal(err)
	}
	claim, err := entry.Encode(entry.Entry{Kind: entry.KindClaim, Epoch: "e", Topic: "t", CommittedOffset: -1, LeaderEpoch: -1, Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	with := func(i int, v ...byte) []byte {
		b := bytes.Clone(valid)
		return append(b[:i:i], append(v, b[i+1:]...)...)
	}
	tests := []struct {
		name  string
		data  []byte
		want  error
		field string
	}{
		{"empty", nil, entry.ErrShort, "version"},
		{"unknown version", with(0, 3), entry.ErrVersion, "version"},
		{"unknown kind", with(1, 7), entry.ErrInvalid, "entry"},
		{"trailing byte", append(bytes.Clone(valid), 0), entry.ErrTrailing, "end"},
		{"non-minimal varint", with(2, 0x82, 0x00), entry.ErrNonCanonical, "epoch"},
		{"varint overflow", append(bytes.Clone(valid[:2]), bytes.Repeat([]byte{0xff}, 11)...), entry.ErrNonCanonical, "epoch"},
		{"string longer than data", with(2, 0x7f), entry.ErrShort, "epoch"},
		{"file count larger than data", append(bytes.Clone(claim[:len(claim)-1]), 0x7f), entry.ErrShort, "file count"},
		{"topic id cut short", valid[:len(valid)-20], entry.ErrShort, "topic id"},
		{"record time cut short", valid[:len(valid)-1], entry.ErrShort, "max record millis"},
		{"partition beyond int32", append(append(bytes.Clone(claim[:7]), 0x80, 0x80, 0x80, 0x80, 0x10), claim[8:]...), entry.ErrInvalid, "partition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := entry.Decode(tc.data)
			var de *entry.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, tc.want) || de.Field != tc.field {
				t.Fatalf("Decode = %v, want *DecodeError in field %q matching %v", err, tc.field, tc.want)
			}
		})
	}
	for i := range valid {
		if _, err := entry.Decode(valid[:i]); !errors.Is(err, entry.ErrShort) {
			t.Errorf("Decode(first %d of %d bytes) = %v, want ErrShort", i, len(valid), err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	valid, _ := entry.Encode(commit())
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte{1, 1, 1, 'e', 0, 1, 't', 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := entry.Decode(b)
		if err != nil {
			var de *entry.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			return
		}
		again, err := entry.Encode(e)
		if err != nil {
			t.Fatalf("decoded entry does not re-encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", b, again)
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	e := commit()
	for b.Loop() {
		if _, err := entry.Encode(e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	data, _ := entry.Encode(commit())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := entry.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
