// Package chaos owns hdfs-sink's fault harness and soak: it runs the
// daemon as a process, in a network namespace of its own, against real
// services while records flow, makes those services fail (SIGKILL,
// SIGSTOP, safe mode, quotas, a full DataNode, network partitions and a
// slow link), and checks afterwards that every offset is on HDFS exactly
// once, that the daemon said what was wrong meanwhile, and how soon after
// the service's return it had caught up, without a restart. The soak does
// the same for hours with SIGKILLs of the daemon and samples its
// resources to find leaks. Faults act through commands, testenv.sh's by
// default, so a staging cluster can be hurt the same way (Config).
// docs/reliability.md has the method and the figures.
package chaos
