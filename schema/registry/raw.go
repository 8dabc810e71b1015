package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riferrei/srclient"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// RawByID is the schema with id as the registry stores it, of any type
// (Protobuf's .proto text, with its references): for converters that
// parse the schema themselves and cache what they build by id. It is not
// cached here. Outages are retried as SchemaByID retries them; refusals
// and a missing id are final.
func (c *Client) RawByID(ctx context.Context, id int32) (schema.Raw, error) {
	return c.retryRaw(ctx, id, fmt.Sprintf("id %d", id), func(sr *srclient.SchemaRegistryClient) (*srclient.Schema, error) {
		return sr.GetSchema(int(id))
	})
}

// RawByVersion is a subject's version as the registry stores it: how a
// schema's references are read.
func (c *Client) RawByVersion(ctx context.Context, subject string, version int) (schema.Raw, error) {
	return c.retryRaw(ctx, 0, fmt.Sprintf("subject %q version %d", subject, version), func(sr *srclient.SchemaRegistryClient) (*srclient.Schema, error) {
		return sr.GetSchemaByVersion(subject, version)
	})
}

func (c *Client) retryRaw(ctx context.Context, id int32, what string, get func(*srclient.SchemaRegistryClient) (*srclient.Schema, error)) (schema.Raw, error) {
	wait := c.initial
	for attempt := 1; ; attempt++ {
		i := c.next.Load()
		b := c.backends[int(i)%len(c.backends)]
		raw, err := get(b.sr)
		if err == nil {
			c.down.OK(time.Now())
			return toRaw(raw), nil
		}
		re := classify(err, id, b.url)
		if !re.Retryable() {
			return schema.Raw{}, fmt.Errorf("schema registry: %s: %w", what, re)
		}
		c.next.CompareAndSwap(i, i+1) // fail over to the next URL
		lasted := c.down.Fail(re, time.Now())
		c.log.Warn("schema registry lookup failed; retrying",
			"schema", what, "attempt", attempt, "backoff", wait, "failing_for", lasted.Round(time.Second), "err", re)
		if sleep(ctx, jitter(wait)) != nil {
			return schema.Raw{}, errors.Join(fmt.Errorf("schema registry: %s: %w after %d failed attempts", what, ctx.Err(), attempt), re)
		}
		wait = min(2*wait, c.max)
	}
}

func toRaw(s *srclient.Schema) schema.Raw {
	r := schema.Raw{Text: s.Schema(), Type: "AVRO"}
	if t := s.SchemaType(); t != nil && *t != "" {
		r.Type = string(*t)
	}
	for _, ref := range s.References() {
		r.References = append(r.References, schema.Reference{Name: ref.Name, Subject: ref.Subject, Version: ref.Version})
	}
	return r
}
