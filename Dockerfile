# The hdfs-sink image: one static binary (CGO_ENABLED=0) and what a Go
# program needs from an OS: CA certificates (TLS to Kafka, the registry),
# zone data, and a passwd entry for the non-root user it runs as.
#
# FROM scratch, because this machine's registries serve no base image (only
# Debian's packages, PyPI, the Go module proxy, npm, Maven Central, crates.io):
# packaging/image.sh builds the binary and copies the certificates and zone
# data from Debian's ca-certificates and tzdata packages into the build
# context (dist/image/rootfs). Build it with `make image`, never as
# `docker build .`: the context is dist/image, not the repository.
FROM scratch
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="hdfs-sink" \
      org.opencontainers.image.description="Kafka to HDFS, exactly once; reads Kafka Connect HDFS sink connector files" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY rootfs/ /
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt ZONEINFO=/usr/share/zoneinfo
# 65532 is the conventional "nonroot" id (distroless). The HDFS user is not
# taken from it: set hdfs.sink.hdfs.user (or HADOOP_USER_NAME).
USER 65532:65532
EXPOSE 8083
# No shell or curl in this image: the binary is its own probe (/readyz).
HEALTHCHECK CMD ["/usr/local/bin/hdfs-sink", "health"]
ENTRYPOINT ["/usr/local/bin/hdfs-sink"]
# The HTTP endpoint listens on all interfaces inside the container, so
# probes and port mappings reach it; outside a container the default stays
# 127.0.0.1. Read-only: other hosts can read status and metrics, nothing
# can be changed over HTTP (the connector files are mounted). To change
# connectors through the REST API, run with a writable config directory
# and --rest-basic-auth-file or --rest-tls-client-ca instead of --read-only
# (docs/security.md); without either the daemon refuses to start.
CMD ["run", "--config", "/etc/hdfs-sink/connectors", "--listen", "0.0.0.0:8083", "--read-only"]
