package transform

import (
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

func routerChainOf(t *testing.T, ts []configs.TransformSpec, ps []configs.PredicateSpec) *Chain {
	t.Helper()
	c, err := New(ts, ps)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	stripRaw = configs.TransformSpec{Alias: "r", Class: "RegexRouter", Props: map[string]string{"regex": "(.*)-raw", "replacement": "$1"}}
	onlyRaw  = []configs.PredicateSpec{{Alias: "raw", Class: "TopicNameMatches", Props: map[string]string{"pattern": ".*-raw"}}}
	byHeader = []configs.PredicateSpec{{Alias: "h", Class: "HasHeaderKey", Props: map[string]string{"name": "x"}}}
	withPred = func(s configs.TransformSpec, pred string, negate bool) configs.TransformSpec {
		s.Predicate, s.Negate = pred, negate
		return s
	}
	prefixAll = configs.TransformSpec{Alias: "p", Class: "RegexRouter", Props: map[string]string{"regex": ".*", "replacement": "eu.$0"}}
)

// TestRouteIsWhatApplyDoes: Route gives each topic the name Apply gives
// every record of it, routers in order, under TopicNameMatches (negated
// too) as Apply evaluates it, after the routers before it.
func TestRouteIsWhatApplyDoes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ts    []configs.TransformSpec
		ps    []configs.PredicateSpec
		topic string
		want  string
	}{
		{"no router", []configs.TransformSpec{{Alias: "f", Class: "Filter", Predicate: "h"}}, byHeader, "orders-raw", "orders-raw"},
		{"strip", []configs.TransformSpec{stripRaw}, nil, "orders-raw", "orders"},
		{"no match keeps the name", []configs.TransformSpec{stripRaw}, nil, "orders", "orders"},
		{"two routers in order", []configs.TransformSpec{stripRaw, prefixAll}, nil, "orders-raw", "eu.orders"},
		{"under TopicNameMatches", []configs.TransformSpec{withPred(prefixAll, "raw", false)}, onlyRaw, "orders-raw", "eu.orders-raw"},
		{"TopicNameMatches not matching", []configs.TransformSpec{withPred(prefixAll, "raw", false)}, onlyRaw, "orders", "orders"},
		{"negated", []configs.TransformSpec{withPred(prefixAll, "raw", true)}, onlyRaw, "orders", "eu.orders"},
		{"predicate sees the routed name", []configs.TransformSpec{stripRaw, withPred(prefixAll, "raw", false)}, onlyRaw, "orders-raw", "orders"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := routerChainOf(t, tt.ts, tt.ps)
			if got := c.Route(tt.topic); got != tt.want {
				t.Errorf("Route(%q) = %q, want %q", tt.topic, got, tt.want)
			}
			r := &Record{Topic: tt.topic}
			if _, err := c.Apply(r); err != nil || r.Topic != tt.want {
				t.Errorf("Apply: topic %q, err %v; want %q", r.Topic, err, tt.want)
			}
			if name, why := c.PerRecordRoute(); name != "" {
				t.Errorf("PerRecordRoute = %s (%s): want one name per topic", name, why)
			}
		})
	}
}

// TestPerRecordRouteRefused: a router whose name can differ between records
// of one topic is named, with why.
func TestPerRecordRouteRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		ts   []configs.TransformSpec
		ps   []configs.PredicateSpec
		want string
	}{
		{"TimestampRouter", []configs.TransformSpec{stripRaw, {Alias: "ts", Class: "TimestampRouter"}}, nil, "ts: TimestampRouter names each record by its timestamp"},
		{"RegexRouter under HasHeaderKey", []configs.TransformSpec{withPred(stripRaw, "h", false)}, byHeader, "r: its predicate does not depend on the topic name alone"},
		{"RegexRouter under RecordIsTombstone", []configs.TransformSpec{withPred(stripRaw, "tomb", false)},
			[]configs.PredicateSpec{{Alias: "tomb", Class: "RecordIsTombstone"}}, "r: its predicate does not depend on the topic name alone"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name, why := routerChainOf(t, tt.ts, tt.ps).PerRecordRoute()
			if got := name + ": " + why; !strings.HasPrefix(got, tt.want) {
				t.Errorf("PerRecordRoute = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCheckRoutesRefusesCollisions: the routing must be one-to-one over the
// consumed topics, never onto another consumed topic, and to legal topic
// names; the error names the topics and the router's keys.
func TestCheckRoutesRefusesCollisions(t *testing.T) {
	toSlash := configs.TransformSpec{Alias: "s", Class: "RegexRouter", Props: map[string]string{"regex": "(.*)-raw", "replacement": "../$1"}}
	for _, tt := range []struct {
		name   string
		ts     []configs.TransformSpec
		topics []string
		want   string // "": accepted
	}{
		{"one-to-one", []configs.TransformSpec{stripRaw}, []string{"orders-raw", "payments-raw", "audit"}, ""},
		{"no router", nil, []string{"a", "b"}, ""},
		{"listed twice", []configs.TransformSpec{stripRaw}, []string{"orders-raw", "orders-raw"}, ""},
		{"two onto one", []configs.TransformSpec{{Alias: "all", Class: "RegexRouter", Props: map[string]string{"regex": "orders-.*", "replacement": "orders"}}},
			[]string{"orders-eu", "orders-us"}, `transforms.all.regex, transforms.all.replacement: topics "orders-eu" and "orders-us" are both routed to "orders"`},
		{"onto a consumed topic", []configs.TransformSpec{stripRaw}, []string{"orders", "orders-raw"},
			`transforms.r.regex, transforms.r.replacement: topic "orders-raw" is routed to "orders", which this connector also consumes`},
		{"not a topic name", []configs.TransformSpec{toSlash}, []string{"orders-raw"}, `topic "orders-raw" is routed to "../orders", which is not a valid Kafka topic name`},
		{"two routers named", []configs.TransformSpec{stripRaw, prefixAll}, []string{"a-raw", "eu.a"}, "transforms.r.regex, transforms.r.replacement, transforms.p.regex, transforms.p.replacement:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c *Chain
			if tt.ts != nil {
				c = routerChainOf(t, tt.ts, nil)
			}
			err := c.CheckRoutes(tt.topics)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckRoutes = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckRoutes err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestValueSchemaSeesTheRoutedName: a schema change under TopicNameMatches
// after a router is judged on the routed name, in ValueSchema (what
// recovery writes the files with) as in Apply (what records are written
// with); the two must agree or recovery would judge the next record
// against another schema.
func TestValueSchemaSeesTheRoutedName(t *testing.T) {
	c := routerChainOf(t, []configs.TransformSpec{stripRaw,
		{Alias: "meta", Class: "SetSchemaMetadata$Value", Props: propsOf("schema.name", "routed"), Predicate: "isOrders"}},
		[]configs.PredicateSpec{{Alias: "isOrders", Class: "TopicNameMatches", Props: propsOf("pattern", "orders")}})
	s := mustSchema(t, `{"type":"record","name":"raw","fields":[{"name":"x","type":"int"}]}`)
	r := &Record{Topic: "orders-raw", Value: Value{Schema: s, Bytes: encode(t, s, map[string]any{"x": int32(1)})}}
	mustApply(t, c, r)
	got, err := c.ValueSchema("orders-raw", s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Value.Schema.Text, `"routed"`) || got.Text != r.Value.Schema.Text {
		t.Errorf("Apply wrote %s, ValueSchema gives %s: want both named routed", r.Value.Schema.Text, got.Text)
	}
}
