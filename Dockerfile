# One static binary on a distroless base: no JVM, no Hadoop install.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/hdfs-sink ./cmd/hdfs-sink

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hdfs-sink /usr/local/bin/hdfs-sink
# No shell or curl in this image: the binary is its own probe (/readyz).
HEALTHCHECK CMD ["/usr/local/bin/hdfs-sink", "health"]
ENTRYPOINT ["/usr/local/bin/hdfs-sink"]
CMD ["run", "--config", "/etc/hdfs-sink/connectors"]
