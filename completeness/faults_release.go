//go:build !faults

package completeness

// FaultsFromEnv is the environment's fault injection: none in a release
// build (faults_env.go reads HDFS_SINK_CRASH_AT_MARK in test builds).
func FaultsFromEnv() (func(Step), error) { return nil, nil }
