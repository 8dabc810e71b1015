package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The offsets of KIP-875 for a sink connector. HDFS is the truth: a
// partition's offset is where its WAL says it resumes, and a change is the
// fenced reset claim of `hdfs-sink offsets reset`, with its checks.

// connectorOffsets is Connect's ConnectorOffsets of a sink connector.
type connectorOffsets struct {
	Offsets []connectorOffset `json:"offsets"`
}

type connectorOffset struct {
	Partition sinkPartition `json:"partition"`
	Offset    *sinkOffset   `json:"offset"`
}

type sinkPartition struct {
	Topic     string `json:"kafka_topic"`
	Partition int32  `json:"kafka_partition"`
}

type sinkOffset struct {
	Offset int64 `json:"kafka_offset"`
}

// offsets is GET /connectors/<name>/offsets: each partition that has a
// committed offset, with the offset it resumes at.
func (a *API) offsets(w http.ResponseWriter, r *http.Request, c Connector) {
	offs, err := a.c.Offsets(r.Context(), c.Config.Name)
	if err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	out := connectorOffsets{Offsets: []connectorOffset{}}
	for _, o := range offs {
		out.Offsets = append(out.Offsets, connectorOffset{Partition: sinkPartition{o.Topic, o.Partition}, Offset: &sinkOffset{*o.Next}})
	}
	writeJSON(w, http.StatusOK, out)
}

// Connect's messages for a change of offsets.
const (
	msgAltered = "The offsets for this connector have been altered successfully"
	msgReset   = "The offsets for this connector have been reset successfully"
)

// notStopped is the 400 of an offsets change while the connector is not
// STOPPED, as Connect refuses it.
func notStopped(w http.ResponseWriter, c Connector) {
	writeError(w, http.StatusBadRequest, fmt.Sprintf("connector %s is %s: a connector must be STOPPED before its offsets can be changed "+
		"(PUT /connectors/%s/stop, then wait for the STOPPED state)", c.Config.Name, c.State, c.Config.Name))
}

// alterOffsets is PATCH /connectors/<name>/offsets: 200 with Connect's
// message once every partition given has been moved.
func (a *API) alterOffsets(w http.ResponseWriter, r *http.Request, c Connector) {
	var body struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	if err := decodeBody(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`the body must be {"offsets": [{"partition": {"kafka_topic": …, "kafka_partition": …}, "offset": {"kafka_offset": …}}, …]}: %v`, err))
		return
	}
	if len(body.Offsets) == 0 {
		writeError(w, http.StatusBadRequest, "the request must list the partitions and offsets to change")
		return
	}
	if c.State != stopped {
		notStopped(w, c)
		return
	}
	var changes []PartitionOffset
	seen := map[sinkPartition]bool{}
	for _, o := range body.Offsets {
		po, err := parseSinkOffset(o.Partition, o.Offset)
		if err == nil && seen[sinkPartition{po.Topic, po.Partition}] {
			err = fmt.Errorf("topic %s partition %d is listed twice", po.Topic, po.Partition)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		seen[sinkPartition{po.Topic, po.Partition}] = true
		changes = append(changes, po)
	}
	if err := a.c.AlterOffsets(r.Context(), c.Config.Name, changes); err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	a.log.Info("connector offsets altered through the REST API", "connector", c.Config.Name, "partitions", len(changes))
	writeJSON(w, http.StatusOK, map[string]string{"message": msgAltered})
}

// resetOffsets is DELETE /connectors/<name>/offsets: every partition
// forgets its committed offset (and starts where
// consumer.auto.offset.reset says); refused while committed files hold
// offsets, as offsets reset --to 0 is.
func (a *API) resetOffsets(w http.ResponseWriter, r *http.Request, c Connector) {
	if c.State != stopped {
		notStopped(w, c)
		return
	}
	if err := a.c.ResetOffsets(r.Context(), c.Config.Name); err != nil {
		a.writeFailure(w, c.Config.Name, err)
		return
	}
	a.log.Info("connector offsets reset through the REST API", "connector", c.Config.Name)
	writeJSON(w, http.StatusOK, map[string]string{"message": msgReset})
}

// parseSinkOffset reads one entry of a PATCH as Connect reads a sink
// connector's: a partition of kafka_topic and kafka_partition (a number
// or a string of one), an offset of kafka_offset or null.
func parseSinkOffset(partition, offset map[string]any) (PartitionOffset, error) {
	var po PartitionOffset
	if partition == nil {
		return po, fmt.Errorf("an offset's partition must not be null or missing")
	}
	topic, hasTopic := partition["kafka_topic"]
	part, hasPart := partition["kafka_partition"]
	if !hasTopic || !hasPart {
		return po, fmt.Errorf("an offset's partition must have the keys 'kafka_topic' and 'kafka_partition'")
	}
	t, ok := topic.(string)
	if !ok || t == "" {
		return po, fmt.Errorf("kafka_topic %v: a topic name is a non-empty string", topic)
	}
	p, err := integer(part, 32)
	if err != nil || p < 0 {
		return po, fmt.Errorf("topic %s: kafka_partition %v: a partition is an integer, 0 or more", t, part)
	}
	po.Topic, po.Partition = t, int32(p)
	if offset == nil {
		return po, nil // forget the committed offset
	}
	v, ok := offset["kafka_offset"]
	if !ok {
		return po, fmt.Errorf("topic %s partition %d: an offset is null or has the key 'kafka_offset'", t, p)
	}
	n, err := integer(v, 64)
	if err != nil || n < 0 {
		return po, fmt.Errorf("topic %s partition %d: kafka_offset %v: an offset is an integer, 0 or more", t, p, v)
	}
	po.Next = &n
	return po, nil
}

// integer is a JSON number, or a string holding one, as Connect accepts
// both.
func integer(v any, bits int) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.ParseInt(x.String(), 10, bits)
	case string:
		return strconv.ParseInt(x, 10, bits)
	}
	return 0, fmt.Errorf("%v is not a number", v)
}
