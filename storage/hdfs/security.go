package hdfs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// Security is what a connection's options amount to, for `check` to show
// and for the operator to compare with the cluster's settings.
type Security struct {
	Kerberos bool
	// NameNodePrincipal is the service principal asked for (realm dropped,
	// _HOST left for colinmarc/hdfs to fill in per NameNode address).
	NameNodePrincipal string
	// DataTransferProtection is the least the DataNodes must offer
	// (authentication, integrity, privacy), or "" for none (plain blocks).
	DataTransferProtection string
	// RPCProtection is hadoop.rpc.protection as configured ("" when unset).
	RPCProtection string
}

func (s Security) String() string {
	if !s.Kerberos {
		return "simple authentication (no Kerberos): the NameNode trusts the user name the client sends"
	}
	dtp := s.DataTransferProtection
	if dtp == "" {
		dtp = "none"
	}
	rpc := s.RPCProtection
	if rpc == "" {
		rpc = "authentication (the default)"
	}
	return fmt.Sprintf("Kerberos to NameNode principal %s; RPC protection as the NameNode offers (hadoop.rpc.protection here: %s); data transfer protection %s", s.NameNodePrincipal, rpc, dtp)
}

// security fills the Kerberos fields of copts. A configuration that asks
// for Kerberos without a login, or a login without a NameNode principal,
// is an error: connecting anyway would fail at run time as an "outage".
func security(conf hadoopconf.HadoopConf, opts Options, copts *hdfs.ClientOptions) (Security, error) {
	sec := Security{DataTransferProtection: copts.DataTransferProtection, RPCProtection: conf["hadoop.rpc.protection"]}
	wantsKerberos := copts.KerberosClient != nil // set by ClientOptionsFromConf
	copts.KerberosClient = nil
	if opts.Kerberos == nil {
		if wantsKerberos {
			return sec, fmt.Errorf("hadoop.conf.dir %s sets hadoop.security.authentication=kerberos: set hdfs.authentication.kerberos=true with connect.hdfs.principal and connect.hdfs.keytab", opts.ConfDir)
		}
		return sec, nil
	}
	spn := opts.NameNodePrincipal
	if spn == "" {
		spn = conf["dfs.namenode.kerberos.principal"]
	}
	if spn == "" {
		return sec, errors.New("Kerberos is on but the NameNode's principal is unknown: set hdfs.namenode.principal (e.g. nn/_HOST@EXAMPLE.COM), or dfs.namenode.kerberos.principal in hadoop.conf.dir")
	}
	if err := checkProtection(conf); err != nil {
		return sec, err
	}
	copts.KerberosClient = opts.Kerberos
	copts.KerberosServicePrincipleName, _, _ = strings.Cut(spn, "@")
	sec.Kerberos, sec.NameNodePrincipal = true, copts.KerberosServicePrincipleName
	return sec, nil
}

var protections = map[string]bool{"authentication": true, "integrity": true, "privacy": true}

// checkProtection refuses protection values colinmarc/hdfs would silently
// read as none (a typo, or SASL names such as auth-conf). Every level is
// served: integrity and privacy without AES through the fork's DIGEST-MD5
// reads (D49).
func checkProtection(conf hadoopconf.HadoopConf) error {
	for _, key := range []string{"dfs.data.transfer.protection", "hadoop.rpc.protection"} {
		for _, v := range strings.Split(conf[key], ",") {
			if v = strings.ToLower(strings.TrimSpace(v)); v != "" && !protections[v] {
				return fmt.Errorf("hadoop.conf.dir: %s=%q: each value must be authentication, integrity or privacy", key, conf[key])
			}
		}
	}
	return nil
}

// authError turns a connect failure that no retry fixes into a
// *kerberos.Error: the NameNode refusing the ticket, the KDC not knowing
// the NameNode's principal, or a NameNode without Kerberos. Anything else
// (a NameNode down) stays as it is, to be retried.
func authError(copts hdfs.ClientOptions, err error) error {
	if copts.KerberosClient == nil || err == nil || kerberos.IsKerberos(err) {
		return err
	}
	msg := err.Error()
	principal := copts.KerberosClient.Credentials.CName().PrincipalNameString() + "@" + copts.KerberosClient.Credentials.Realm()
	reason := ""
	switch {
	case strings.Contains(msg, "KDC_ERR_S_PRINCIPAL_UNKNOWN"):
		reason = fmt.Sprintf("the KDC does not know the NameNode principal %s (check hdfs.namenode.principal / dfs.namenode.kerberos.principal, and that store.url names the NameNode by its host name)", copts.KerberosServicePrincipleName)
	case strings.Contains(msg, "kerberos authentication not supported"):
		reason = "the NameNode does not use Kerberos (its hadoop.security.authentication is simple)"
	case strings.Contains(msg, "SaslException") || strings.Contains(msg, "GSS") || strings.Contains(msg, "sasl"):
		reason = fmt.Sprintf("the NameNode refused the Kerberos authentication: is %s its principal? (%v)", copts.KerberosServicePrincipleName, err)
	case strings.Contains(msg, "KDC_ERR") || strings.Contains(msg, "KRB_AP_ERR"):
		reason = "ticket for the NameNode: " + msg
	default:
		if kerr := asKDCFailure(principal, err); kerr != nil {
			return kerr
		}
		return err
	}
	return &kerberos.Error{Principal: principal, Kind: kerberos.KindRefused, Reason: reason, Err: err}
}

// asKDCFailure recognises a KDC that could not be reached while asking for
// the NameNode's ticket: retryable, but named as such.
func asKDCFailure(principal string, err error) error {
	if msg := err.Error(); strings.Contains(msg, "communication error with KDC") || strings.Contains(msg, "failed to communicate with KDC") {
		return &kerberos.Error{Principal: principal, Kind: kerberos.KindUnreachable, Reason: "ticket for the NameNode: no KDC answered: " + msg, Err: err}
	}
	return nil
}
