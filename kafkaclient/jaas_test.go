package kafkaclient

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		in   string
		want []LoginModule
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a-secret";`,
			[]LoginModule{{plainModule, "required", map[string]string{"username": "alice", "password": "a-secret"}}}},
		// Bare words, single quotes, Java escapes, comments and line breaks.
		{"org.apache.kafka.common.security.scram.ScramLoginModule REQUIRED\n  username=bob // the user\n  password='p\\'w\\\\d\\t;=' /* quoted ; and = */ tokenauth=true;",
			[]LoginModule{{scramModule, "required", map[string]string{"username": "bob", "password": "p'w\\d\t;=", "tokenauth": "true"}}}},
		{`x.Y optional a="\101\60\0";`, []LoginModule{{"x.Y", "optional", map[string]string{"a": "A0\x00"}}}},
		{`a.B sufficient; c.D requisite k=v;`, []LoginModule{{"a.B", "sufficient", map[string]string{}}, {"c.D", "requisite", map[string]string{"k": "v"}}}},
		{`a.B required k=ünïcödé;`, []LoginModule{{"a.B", "required", map[string]string{"k": "ünïcödé"}}}},
	}
	for _, tt := range tests {
		got, err := ParseJAAS(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseJAAS(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestParseJAASErrors: what Java refuses is refused, and the message never
// quotes the text (which holds passwords).
func TestParseJAASErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "no login module"},
		{`/* only a comment */`, "no login module"},
		{`a.B required username="x" password="hunter2"`, "not terminated by ';'"},
		{`a.B mandatory username="x";`, "control flag must be required"},
		{`a.B;`, "control flag must be required"},
		{`a.B required password;`, `no value for option "password"`},
		{`a.B required keyTab=/etc/x.keytab;`, `no value for option "keyTab"`}, // '/' starts a comment, as in Java
		{`a.B required password="hunter2;`, "unterminated quoted value"},
		{"a.B required password=\"hunter2\n\";", "unterminated quoted value"},
		{`a.B required /* hunter2`, "unterminated /* comment"},
		{`= required;`, "expected a login module class"},
		{`a.B required k==v;`, "no value for option"},
	}
	for _, tt := range tests {
		_, err := ParseJAAS(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseJAAS(%q): %v, want %q", tt.in, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseJAAS(%q) error shows the password: %v", tt.in, err)
		}
	}
}
