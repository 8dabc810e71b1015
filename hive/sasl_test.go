package hive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	hms "github.com/beltran/gohive/hive_metastore"
)

// fakeMech is a two-step mechanism: initial response "init", then "r1" to
// the challenge "c1".
type fakeMech struct{ host chan string }

func (m fakeMech) Name() string { return "GSSAPI" }

func (m fakeMech) Start(host string) (SASLSession, []byte, error) {
	m.host <- host
	return fakeSession{}, []byte("init"), nil
}

type fakeSession struct{}

func (fakeSession) Step(c []byte) ([]byte, bool, error) {
	if string(c) != "c1" {
		return nil, false, errors.New("unexpected challenge " + string(c))
	}
	return []byte("r1"), true, nil
}

type saslMsg struct {
	status  byte
	payload string
}

func readMsg(r io.Reader) (saslMsg, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return saslMsg{}, err
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
	_, err := io.ReadFull(r, b)
	return saslMsg{hdr[0], string(b)}, err
}

func writeMsg(w io.Writer, status byte, payload string) {
	hdr := [5]byte{status}
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	w.Write(append(hdr[:], payload...))
}

// serveSASL accepts one connection, runs the server side of the
// negotiation (answering with final, COMPLETE or an error status), records
// what the client sent, then serves the fake metastore over SASL frames.
func serveSASL(t *testing.T, f *fakeHMS, final byte) (string, chan []saslMsg) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan []saslMsg, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var msgs []saslMsg
		for range 2 {
			m, _ := readMsg(conn)
			msgs = append(msgs, m)
		}
		writeMsg(conn, saslOK, "c1")
		m, _ := readMsg(conn)
		got <- append(msgs, m)
		writeMsg(conn, final, "nope")
		if final != saslComplete {
			return
		}
		trans := thrift.NewTFramedTransportConf(thrift.NewTSocketFromConnConf(conn, nil), nil)
		proto := thrift.NewTBinaryProtocolConf(trans, nil)
		proc := hms.NewThriftHiveMetastoreProcessor(f)
		for {
			if ok, err := proc.Process(context.Background(), proto, proto); !ok || err != nil {
				return
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestSASLTransport(t *testing.T) {
	f := newFakeHMS()
	t.Cleanup(func() { close(f.block) })
	addr, got := serveSASL(t, f, saslComplete)
	mech := fakeMech{host: make(chan string, 1)}
	c, err := Dial(context.Background(), "thrift://"+addr, WithSASL(mech))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msgs := <-got
	want := []saslMsg{{saslStart, "GSSAPI"}, {saslOK, "init"}, {saslComplete, "r1"}}
	for i := range want {
		if msgs[i] != want[i] {
			t.Fatalf("client sent %v, want %v", msgs, want)
		}
	}
	if h := <-mech.host; h != "127.0.0.1" {
		t.Errorf("mechanism started for host %q", h)
	}
	// A call large enough to span buffer sizes goes through the frames.
	loc := "hdfs://nn:8020/" + strings.Repeat("x", 100<<10)
	if err := c.CreateDatabase(context.Background(), "sales", loc); err != nil {
		t.Fatalf("CreateDatabase over SASL frames: %v", err)
	}
	if got := f.database("sales").LocationUri; got != loc {
		t.Errorf("location of %d bytes arrived as %d", len(loc), len(got))
	}
}

func TestSASLTransportRefused(t *testing.T) {
	addr, _ := serveSASL(t, nil, saslBad)
	_, err := Dial(context.Background(), "thrift://"+addr, WithSASL(fakeMech{host: make(chan string, 1)}))
	if err == nil || !strings.Contains(err.Error(), "the metastore refused: nope") {
		t.Fatalf("err %v", err)
	}
}

func TestSASLFrameLimit(t *testing.T) {
	tr := &saslTransport{r: bufioReader(bytes.NewReader([]byte{saslOK, 0x7f, 0xff, 0xff, 0xff}))}
	if _, _, err := tr.readMessage(); err == nil || !strings.Contains(err.Error(), "not a Thrift SASL server") {
		t.Fatalf("err %v", err)
	}
}
