package wiring

import (
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

func TestServiceSPN(t *testing.T) {
	if got := serviceSPN("hive/_HOST@EXAMPLE.COM", "HMS1.example.com"); got != "hive/hms1.example.com" {
		t.Errorf("serviceSPN = %q", got)
	}
}

// TestRPCProtectionWarning: the warning that colinmarc/hdfs sends its
// requests unwrapped is for integrity and privacy (alone or in Hadoop's
// comma list), not for authentication, which merely contains an "i".
func TestRPCProtectionWarning(t *testing.T) {
	c := &configs.Connector{Store: configs.StoreURL{Host: "nn1.example.com:8020"}}
	for protection, warn := range map[string]bool{
		"": false, "authentication": false, "AUTHENTICATION": false,
		"integrity": true, "privacy": true, "authentication,privacy": true, " Integrity ": true,
	} {
		warns := hdfsWarnings(c, hdfs.Security{Kerberos: true, RPCProtection: protection, NameNodePrincipal: "nn/_HOST"})
		got := strings.Contains(strings.Join(warns, "\n"), "hadoop.rpc.protection=")
		if got != warn {
			t.Errorf("hadoop.rpc.protection %q: warned %v, want %v (%q)", protection, got, warn, warns)
		}
	}
}
