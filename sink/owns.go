package sink

// Owns reports whether the connector owns partition p of topic now: the
// completeness marker of a topic runs where its partition 0 is owned.
func (c *Connector) Owns(topic string, p int32) bool {
	return c.parts.get(tp{topic: topic, partition: p}) != nil
}
