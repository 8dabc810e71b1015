package configs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// Pin the environment-derived default so tests do not depend on the host.
	defaultHDFSUser = func() string { return "test-user" }
	os.Exit(m.Run())
}

func mustParse(t *testing.T, file string) (*Connector, []Warning) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, w, err := Parse(filepath.Base(file), data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", file, err)
	}
	return c, w
}

func TestDefaults(t *testing.T) {
	c, warns := mustParse(t, "testdata/good/minimal-rest.json")
	if len(warns) != 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Name", c.Name, "orders"},
		{"Source", c.Source, "minimal-rest.json"},
		{"TasksMax", c.TasksMax, 1},
		{"Topics", c.Topics, []string{"orders"}},
		{"TopicsRegex", c.TopicsRegex == nil, true},
		{"Store", c.Store, StoreURL{Raw: "hdfs://127.0.0.1:8020", Scheme: "hdfs", Host: "127.0.0.1:8020", Path: "/"}},
		{"HDFSUser", c.HDFSUser, "test-user"},
		{"TopicsDir", c.TopicsDir("orders"), "/topics"},
		{"LogsDir", c.LogsDir("orders"), "/logs"},
		{"FlushSize", c.FlushSize, int64(1000)},
		{"RotateInterval", c.RotateInterval, time.Duration(0)},
		{"RotateScheduleInterval", c.RotateScheduleInterval, time.Duration(0)},
		{"RotateMaxFileBytes", c.RotateMaxFileBytes, int64(0)},
		{"Completeness", c.Completeness, Completeness{MarkerName: "_SUCCESS", Interval: time.Minute, Lookback: 7 * 24 * time.Hour}},
		{"MemoryMaxBytes", c.MemoryMaxBytes, int64(256 << 20)},
		{"OffsetPadWidth", c.OffsetPadWidth, 10},
		{"RetryBackoff", c.RetryBackoff, 5 * time.Second},
		{"ShutdownTimeout", c.ShutdownTimeout, 3 * time.Second},
		{"Timezone", c.Timezone == nil, true},
		{"Format", c.Format, FormatAvro},
		{"AvroCodec", c.AvroCodec, AvroNull},
		{"ParquetCodec", c.ParquetCodec, ParquetSnappy},
		{"SchemaCompatibility", c.SchemaCompatibility, CompatNone},
		{"Partitioner", c.Partitioner, Partitioner{Kind: PartitionDefault, Extractor: ExtractWallclock, TimestampField: "timestamp"}},
		{"Hive", c.Hive, Hive{Database: "default", TableTemplate: "${topic}"}},
		{"HiveTable", c.HiveTable("my.orders-v1"), "my_orders_v1"},
		{"Errors", c.Errors, ErrorHandling{Tolerance: ToleranceNone, DLQReplication: 3}},
		{"NullValues", c.NullValues, NullIgnore},
		{"Registry", c.Registry, SchemaRegistry{URLs: []string{"http://127.0.0.1:8081"}, CredentialsSource: CredentialsURL,
			Props: map[string]string{"schema.registry.url": "http://127.0.0.1:8081"}}},
		{"Consumer", c.Consumer, Consumer{BootstrapServers: []string{"127.0.0.1:9092"}, GroupID: "connect-orders",
			AutoOffsetReset: ResetEarliest, Overrides: map[string]string{}}},
		{"Kafka.Consumer", c.Kafka.Consumer, map[string]string{"bootstrap.servers": "127.0.0.1:9092"}},
		{"SchemaCacheSize", c.SchemaCacheSize, 1000},
		{"Raw flush.size", c.Raw["flush.size"], "1000"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

func TestFlatShapeNumbersAndExtras(t *testing.T) {
	c, warns := mustParse(t, "testdata/good/flat-numbers.json")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	checks := []struct {
		name      string
		got, want any
	}{
		{"Name", c.Name, "clicks"},
		{"Class", c.Class, "io.confluent.connect.hdfs3.Hdfs3SinkConnector"},
		{"TasksMax", c.TasksMax, 4},
		{"Topics", c.Topics == nil, true},
		{"regex matches whole name", c.TopicsRegex.MatchString("clicks-eu"), true},
		{"regex is anchored", c.TopicsRegex.MatchString("old-clicks-eu"), false},
		{"Store (store.url wins)", c.Store, StoreURL{Raw: "hdfs://namenode:8020/data/", Scheme: "hdfs", Host: "namenode:8020", Path: "/data"}},
		{"TopicsDir", c.TopicsDir("clicks-eu"), "/data/raw/clicks-eu"},
		{"LogsDir", c.LogsDir("clicks-eu"), "/data/wal"},
		{"HDFSUser", c.HDFSUser, "etl"},
		{"FlushSize", c.FlushSize, int64(5000)},
		{"RotateInterval", c.RotateInterval, 10 * time.Minute},
		{"RotateScheduleInterval", c.RotateScheduleInterval, time.Hour},
		{"Timezone", c.Timezone.String(), berlin.String()},
		{"Locale", c.Locale, "de_DE"},
		{"OffsetPadWidth", c.OffsetPadWidth, 12},
		{"AvroCodec", c.AvroCodec, AvroSnappy},
		{"SchemaCompatibility", c.SchemaCompatibility, CompatBackward},
		{"Partitioner", c.Partitioner, Partitioner{Kind: PartitionTimeBased, Duration: time.Hour,
			PathFormat: "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", Extractor: ExtractRecordField, TimestampField: "ts"}},
		{"Errors", c.Errors, ErrorHandling{Tolerance: ToleranceAll, DLQTopic: "dlq-clicks", DLQContextHeaders: true, DLQReplication: 3, LogEnable: true}},
		{"NullValues", c.NullValues, NullIgnore},
		{"Registry", c.Registry, SchemaRegistry{
			URLs:              []string{"http://127.0.0.1:8081/apis/ccompat/v7", "https://registry2:8081"},
			CredentialsSource: CredentialsURL, UserInfo: "u:p",
			Props: map[string]string{"schema.registry.url": "http://u:p@127.0.0.1:8081/apis/ccompat/v7/,https://registry2:8081"}}},
		{"Consumer", c.Consumer, Consumer{BootstrapServers: []string{"127.0.0.1:9092", "127.0.0.1:9093"},
			GroupID: "connect-clicks", AutoOffsetReset: ResetLatest,
			Overrides: map[string]string{"max.poll.records": "500", "fetch.max.bytes": "1048576"}}},
		{"MemoryMaxBytes", c.MemoryMaxBytes, int64(64 << 20)},
		{"SchemaCacheSize (schema.cache.size, the older key)", c.SchemaCacheSize, 100},
		{"RotateMaxFileBytes", c.RotateMaxFileBytes, int64(128 << 20)},
		{"Raw number", c.Raw["flush.size"], "5000"},
		{"Raw bool", c.Raw["hive.integration"], "false"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	wantWarn := []string{
		`connector "clicks": consumer.group.id: ignored: the group id is consumer.override.group.id, else connect-<name>`,
		`connector "clicks": flush.szie: unknown key, ignored (did you mean "flush.size"?)`,
		`connector "clicks": hdfs.url: ignored because store.url is set`,
		`connector "clicks": schema.registry.url: http://[hidden]@127.0.0.1:8081/apis/ccompat/v7/ is plain http: the basic auth password (in the URL) goes in clear to the registry and anyone on the path (use https)`,
		`connector "clicks": transforms: single message transforms are not applied by hdfs-sink: records are written as consumed`,
	}
	if got := warnStrings(warns); !reflect.DeepEqual(got, wantWarn) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantWarn, "\n"))
	}
}

func warnStrings(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

func TestRESTShapeWithHive(t *testing.T) {
	c, warns := mustParse(t, "testdata/good/hive-parquet.json")
	if len(warns) != 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Topics trimmed", c.Topics, []string{"payments", "refunds"}},
		{"Store", c.Store, StoreURL{Raw: "file:///tmp/hdfs-sink-data", Scheme: "file", Path: "/tmp/hdfs-sink-data"}},
		{"TopicsDir", c.TopicsDir("payments"), "/tmp/hdfs-sink-data/topics"},
		{"Format", c.Format, FormatParquet},
		{"ParquetCodec", c.ParquetCodec, ParquetUncompressed},
		{"Partitioner", c.Partitioner, Partitioner{Kind: PartitionField, Fields: []string{"country", "region.code"},
			Extractor: ExtractWallclock, TimestampField: "timestamp"}},
		{"Hive", c.Hive, Hive{Enabled: true, MetastoreURIs: []string{"thrift://127.0.0.1:9083", "thrift://127.0.0.2:9083"},
			Database: "raw", TableTemplate: "kafka_${topic}"}},
		{"HiveTable", c.HiveTable("payments.v1"), "kafka_payments_v1"},
		{"Registry", c.Registry, SchemaRegistry{URLs: []string{"https://127.0.0.1:8081"},
			CredentialsSource: CredentialsUserInfo, UserInfo: "svc:s3cret", Props: map[string]string{
				"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "svc:s3cret", "schema.registry.url": "https://127.0.0.1:8081"}}},
		{"Consumer", c.Consumer, Consumer{BootstrapServers: []string{"127.0.0.1:9092"}, GroupID: "hdfs-payments",
			AutoOffsetReset: ResetNone, Overrides: map[string]string{}}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

func TestFixedTimePartitioners(t *testing.T) {
	c, warns := mustParse(t, "testdata/good/daily.json")
	want := Partitioner{Kind: PartitionHourly, Duration: time.Hour,
		PathFormat: "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", Extractor: ExtractRecord, TimestampField: "timestamp"}
	if !reflect.DeepEqual(c.Partitioner, want) {
		t.Errorf("Partitioner = %#v, want %#v", c.Partitioner, want)
	}
	if c.Store.Host != "nameservice1" || c.HadoopConfDir != "/etc/hadoop/conf" {
		t.Errorf("Store = %#v, HadoopConfDir = %q", c.Store, c.HadoopConfDir)
	}
	wantWarn := []string{`connector "daily": path.format: ignored: the hourly partitioner has a fixed layout`}
	if got := warnStrings(warns); !reflect.DeepEqual(got, wantWarn) {
		t.Errorf("warnings = %q, want %q", got, wantWarn)
	}
}

// A value written as a JSON string and as a JSON number/bool must give the
// same connector.
func TestStringAndNumberValuesAgree(t *testing.T) {
	const tmpl = `{"name":"n","config":{"topics":"t","hdfs.url":"hdfs://h:8020",
		"bootstrap.servers":"h:9092","value.converter.schema.registry.url":"http://h:8081",
		"flush.size":%s,"rotate.interval.ms":%s,"hive.integration":%s,"errors.log.enable":%s}}`
	parse := func(vals ...any) *Connector {
		c, _, err := Parse("n.json", []byte(sprintf(tmpl, vals...)))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := parse(`"42"`, `"-1"`, `"false"`, `"true"`)
	b := parse(`42`, `-1`, `false`, `true`)
	a.Raw, b.Raw = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("string-valued and number-valued configs differ:\n%#v\n%#v", a, b)
	}
	if a.FlushSize != 42 || !a.Errors.LogEnable {
		t.Errorf("values not read: %+v", a)
	}
}

func sprintf(tmpl string, vals ...any) string {
	for _, v := range vals {
		tmpl = strings.Replace(tmpl, "%s", v.(string), 1)
	}
	return tmpl
}

func TestLoadFile(t *testing.T) {
	conns, _, err := LoadPath("testdata/good/minimal-rest.json")
	if err != nil || len(conns) != 1 || conns[0].Source != "testdata/good/minimal-rest.json" {
		t.Fatalf("LoadPath(file) = %v, %v", conns, err)
	}
}

func TestLoadDirectory(t *testing.T) {
	conns, _, err := LoadPath("testdata/dir")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range conns {
		names = append(names, c.Name+"@"+c.Source)
	}
	want := []string{"conn-a@" + filepath.Join("testdata/dir", "a.json"), "conn-b@" + filepath.Join("testdata/dir", "b.json")}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("loaded %v, want %v", names, want)
	}
}

func TestLoadErrors(t *testing.T) {
	empty := t.TempDir()
	badDir := t.TempDir()
	for name, body := range map[string]string{
		"1.json": `{"name":"x","config":{"flush.size":"ten"}}`,
		"2.json": `{`,
	} {
		if err := os.WriteFile(filepath.Join(badDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		path string
		want []string // substrings, each must appear
		as   any
	}{
		{"duplicate names", "testdata/dup", []string{
			`connector "orders" is defined twice: in testdata/dup/1-orders.json and in testdata/dup/2-orders-flat.json`}, new(*DuplicateNameError)},
		{"missing path", "testdata/nope", []string{"load connector config:", "no such file"}, nil},
		{"no json files", empty, []string{"no *.json or *.properties connector files in directory"}, new(*FileError)},
		{"errors of all files together", badDir, []string{
			`connector "x" (` + filepath.Join(badDir, "1.json") + `): flush.size = "ten"`,
			filepath.Join(badDir, "2.json") + ":1:2: unexpected end of file"}, new(*SyntaxError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns, _, err := LoadPath(tt.path)
			if err == nil || conns != nil {
				t.Fatalf("LoadPath(%s) = %v, %v; want error", tt.path, conns, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tt.as != nil && !errors.As(err, tt.as) {
				t.Errorf("error %T does not match %T", err, tt.as)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"flush.szie", "flush.size"},
		{"topic", "topics"},
		{"hive.metastore.uri", "hive.metastore.uris"},
		{"partitioner.clas", "partitioner.class"},
		{"completely.unrelated.key", ""},
		{"foo", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHivePathFormat(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"'year'=YYYY", true},
		{"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm", true},
		{"'year'=YYYY/'day'=dd", false},
		{"'month'=MM", false},
		{"YYYY/MM", false},
		{"'year'=", false},
		{"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm/'second'=ss", false},
	}
	for _, tt := range tests {
		if got := hivePathFormat(tt.in); got != tt.want {
			t.Errorf("hivePathFormat(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestUnknownAndFrameworkKeys(t *testing.T) {
	raw := map[string]string{
		"transforms.x.type": "a", "predicates": "p", "errors.retry.timeout": "0",
		"key.converter.schemas.enable": "false", "header.converter": "h",
		"producer.override.acks": "all", "name": "n", "hdfs.sink.memory.max.byte": "1",
		"totally.new": "x", "storage.class": "io.confluent.connect.hdfs.storage.HdfsStorage",
	}
	got := warnStrings(keyWarnings(raw))
	want := []string{
		`connector "": hdfs.sink.memory.max.byte: unknown key, ignored (did you mean "hdfs.sink.memory.max.bytes"?)`,
		`connector "": totally.new: unknown key, ignored`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The shipped examples must load cleanly, without warnings.
func TestExamples(t *testing.T) {
	conns, warns, err := LoadPath("examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	got := map[string]string{}
	for _, c := range conns {
		got[c.Name] = c.Store.Raw + " " + c.Registry.URLs[0]
	}
	want := map[string]string{
		"hdfs-sink-orders":  "hdfs://127.0.0.1:8020 http://127.0.0.1:8081/apis/ccompat/v7",
		"local-file-orders": "file:///tmp/hdfs-sink-data http://127.0.0.1:8081/apis/ccompat/v7",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("examples = %v, want %v", got, want)
	}
}
