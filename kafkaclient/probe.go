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
// options (a client id, the metrics hooks). An immediate disconnect after
// each of several connections means the protocol does not match the
// listener: that is an *AuthError too, since waiting would not change it.
func (s *Security) WaitReady(ctx context.Context, seeds []string, extra ...kgo.Opt) error {
	return s.WaitReadyReporting(ctx, seeds, nil, extra...)
}

// WaitReadyReporting is WaitReady telling report (nil: nobody) the outcome
// of every attempt: its error, or nil once a broker answered. The daemon
// makes its readiness and dependency_up of it, so that a Kafka that is
// down from the start is an outage that shows, not a connector that only
// says "starting". An attempt cut short because ctx ended is not reported:
// stopping is not an outage. The probe clients live as long as the wait,
// so client metrics hooked in through extra count every attempt's
// connection errors on one set of series.
func (s *Security) WaitReadyReporting(ctx context.Context, seeds []string, report func(error), extra ...kgo.Opt) error {
	log := s.logOrDiscard()
	probes, err := s.newProbes(seeds, extra)
	if err != nil {
		return err
	}
	defer probes.close()
	wait, eofs := time.Second, 0
	for attempt := 1; ; attempt++ {
		err := probes.ping(ctx, s)
		if report != nil && ctx.Err() == nil {
			report(err)
		}
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

// Probe asks the seed brokers for metadata once, without waiting for any:
// nil once one answers, an *AuthError when one refuses the credentials or
// the TLS handshake, else the last seed's error (a refused connection at
// once). `hdfs-sink check --connect` asks this, bounded by ctx, before it
// builds a client that would retry.
func (s *Security) Probe(ctx context.Context, seeds []string, extra ...kgo.Opt) error {
	probes, err := s.newProbes(seeds, extra)
	if err != nil {
		return err
	}
	defer probes.close()
	err = probes.ping(ctx, s)
	if ae := s.Fatal(err); ae != nil {
		return ae
	}
	return err
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

// seedProbes are one client per seed broker, so that a failure is known
// to be that broker's; a wait keeps them across its attempts.
type seedProbes []seedProbe

type seedProbe struct {
	seed string
	cl   *kgo.Client
}

// newProbes builds every seed's client before any is used: a metrics hook
// in extra registers its series at each client's creation, and none may
// do so while another client runs.
func (s *Security) newProbes(seeds []string, extra []kgo.Opt) (seedProbes, error) {
	var out seedProbes
	for _, seed := range seeds {
		opts := append(s.Opts(s.logOrDiscard()), kgo.SeedBrokers(seed), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
		cl, err := kgo.NewClient(append(opts, extra...)...)
		if err != nil {
			out.close()
			return nil, err
		}
		out = append(out, seedProbe{seed: seed, cl: cl})
	}
	return out, nil
}

func (p seedProbes) close() {
	for _, sp := range p {
		sp.cl.Close()
	}
}

// ping returns nil once a seed answers, else the first seed's error that
// no retry fixes, else the last error.
func (p seedProbes) ping(ctx context.Context, s *Security) error {
	var last error
	for _, sp := range p {
		err := sp.ping(ctx, s)
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

// ping is one metadata request to the seed, probeTimeout at most.
func (sp seedProbe) ping(ctx context.Context, s *Security) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	s.last.Store(sp.seed)
	return sp.cl.Ping(ctx)
}

func (s *Security) logOrDiscard() *slog.Logger {
	if s.log != nil {
		return s.log
	}
	return slog.New(slog.DiscardHandler)
}
