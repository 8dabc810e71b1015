package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// Probe bounds, and how many immediate disconnects in a row mean that the
// listener does not speak security.protocol.
const (
	probeTimeout   = 15 * time.Second
	probeMaxWait   = 30 * time.Second
	firstReadLimit = 3
)

// WaitReady asks the seed brokers for metadata, with s's security, until
// one answers (nil), one refuses the credentials or the TLS handshake (an
// *AuthError, at once), or ctx ends. Brokers that are down or unreachable
// are waited for, with a warning per attempt. extra are further client
// options (a client id). An immediate disconnect after each of several
// connections means the protocol does not match the listener: that is an
// *AuthError too, since waiting would not change it.
func (s *Security) WaitReady(ctx context.Context, seeds []string, extra ...kgo.Opt) error {
	log := s.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait, eofs := time.Second, 0
	for attempt := 1; ; attempt++ {
		err := s.probeAll(ctx, seeds, extra)
		if err == nil {
			return nil
		}
		if ae := s.Fatal(err); ae != nil {
			return ae
		}
		if eofs = countEOF(err, eofs); eofs >= firstReadLimit {
			return &AuthError{Service: "Kafka", Addr: s.lastAddr(), Err: err,
				Reason: fmt.Sprintf("the broker closes every connection at once: does security.protocol=%s match the listener? (%v)", s.Protocol, err)}
		}
		log.Warn(waitMessage(err), "seeds", seeds, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("Kafka at %v never became reachable: %w", seeds, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, probeMaxWait)
	}
}

// waitMessage names what is waited for: under GSSAPI the broker may be up
// and the KDC the one that does not answer.
func waitMessage(err error) string {
	if kerberos.Retryable(err) {
		return "Kerberos KDC unreachable; retrying the Kafka login"
	}
	return "Kafka not reachable; retrying"
}

func countEOF(err error, n int) int {
	var eof *kgo.ErrFirstReadEOF
	if errors.As(err, &eof) {
		return n + 1
	}
	return 0
}

// probeAll returns nil once a seed answers, else the first seed's error
// that no retry fixes, else the last error.
func (s *Security) probeAll(ctx context.Context, seeds []string, extra []kgo.Opt) error {
	var last error
	for _, seed := range seeds {
		err := s.probe(ctx, seed, extra)
		if err == nil {
			return nil
		}
		if s.Fatal(err) != nil {
			return err
		}
		last = err
	}
	return last
}

// probe is one metadata request to one seed, on a client of its own so
// that a failure is known to be that broker's.
func (s *Security) probe(ctx context.Context, seed string, extra []kgo.Opt) error {
	opts := append(s.Opts(s.logOrDiscard()), kgo.SeedBrokers(seed), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	s.last.Store(seed)
	return cl.Ping(ctx)
}

func (s *Security) logOrDiscard() *slog.Logger {
	if s.log != nil {
		return s.log
	}
	return slog.New(slog.DiscardHandler)
}
