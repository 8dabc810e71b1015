// Package packaging holds what ships hdfs-sink outside `go build`: the
// container image script (image.sh, with the Dockerfile at the repository
// root), the systemd unit (systemd/) and the Kubernetes example
// (kubernetes/, a module of its own). Its tests check the unit with
// systemd-analyze; the Kubernetes example is checked by its own module's
// tests (make unit runs both) and the image by the container integration
// test.
package packaging
