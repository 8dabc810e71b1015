package kafkaclient

import "github.com/hdfs-sink/hdfs-sink/tlsprops"

// Validate reports every setting of p that cannot be honoured (see Parse).
func Validate(p Props, name tlsprops.Namer) error {
	_, err := Parse(p, name)
	return err
}
