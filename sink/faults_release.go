//go:build !faults

package sink

// FaultsFromEnv is the environment's fault injection: none in a release
// build. Test builds (`-tags faults`, as the integration tests build the
// daemon) read it from the environment (faults_env.go).
func FaultsFromEnv() (Faults, error) { return nil, nil }
