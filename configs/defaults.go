package configs

import (
	"os"
	"os/user"
)

// Defaults, all in one place. They match the reference connector except
// where README.md says otherwise.
const (
	DefaultTopicsDir           = "topics"
	DefaultLogsDir             = "logs"
	DefaultRotateIntervalMs    = -1
	DefaultRotateScheduleMs    = -1
	DefaultOffsetPadWidth      = 10
	DefaultRetryBackoffMs      = 5000
	DefaultShutdownTimeoutMs   = 3000
	DefaultPartitionDurationMs = -1
	DefaultTimestampField      = "timestamp"
	DefaultHiveDatabase        = "default"
	DefaultHiveTable           = topicVar
	DefaultTasksMax            = 1
	DefaultMemoryMaxBytes      = 256 << 20
	DefaultRotateMaxFileBytes  = 0
	DefaultGroupPrefix         = "connect-"
	DefaultSchemaCacheSize     = 1000 // schemas.cache.config, as the reference
	DefaultDLQReplication      = 3    // as Connect
	DefaultKerberosRenewMs     = 3600000

	DefaultFormat          = FormatAvro
	DefaultAvroCodec       = AvroNull
	DefaultParquetCodec    = ParquetSnappy
	DefaultCompatibility   = CompatNone
	DefaultPartitioner     = PartitionDefault
	DefaultExtractor       = ExtractWallclock
	DefaultTolerance       = ToleranceNone
	DefaultNullValues      = NullIgnore
	DefaultCredentialsSrc  = CredentialsURL
	DefaultAutoOffsetReset = ResetEarliest
)

// Fixed settings of the Daily and Hourly partitioners (reference values).
const (
	dailyPathFormat  = "'year'=YYYY/'month'=MM/'day'=dd"
	hourlyPathFormat = dailyPathFormat + "/'hour'=HH"
)

// defaultHDFSUser is hdfs.sink.hdfs.user when unset: HADOOP_USER_NAME, as
// Hadoop's simple authentication reads it, else the OS user running the
// daemon, else "root". A variable so tests can pin it.
var defaultHDFSUser = func() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "root"
}

// DefaultParquetRowGroupBytes is hdfs.sink.parquet.row.group.bytes: the
// buffered size at which a Parquet row group is written (the reference
// hard-codes 256 MB; smaller groups keep many open files within the memory
// ceiling).
const DefaultParquetRowGroupBytes = 32 << 20
