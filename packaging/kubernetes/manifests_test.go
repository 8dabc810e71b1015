// Package kubernetes holds the Kubernetes example and its test. It is a
// module of its own so that the Kubernetes API types it is checked against
// stay out of hdfs-sink's go.mod.
package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// manifests are the objects of hdfs-sink.yaml, decoded strictly: a field
// the API types do not have (a typo, a wrong level) fails the test, as
// `kubectl apply --validate=strict` would.
type manifests struct {
	configMaps map[string]corev1.ConfigMap
	secrets    map[string]corev1.Secret
	services   map[string]corev1.Service
	sts        appsv1.StatefulSet
	policies   []networkingv1.NetworkPolicy
}

func load(t *testing.T) manifests {
	t.Helper()
	data, err := os.ReadFile("hdfs-sink.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := manifests{configMaps: map[string]corev1.ConfigMap{}, secrets: map[string]corev1.Secret{}, services: map[string]corev1.Service{}}
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		if err := m.add(doc); err != nil {
			t.Fatalf("hdfs-sink.yaml document %d: %v", i+1, err)
		}
	}
	return m
}

func (m *manifests) add(doc []byte) error {
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	switch head.APIVersion + " " + head.Kind {
	case "v1 ConfigMap":
		var o corev1.ConfigMap
		err := yaml.UnmarshalStrict(doc, &o)
		m.configMaps[o.Name] = o
		return err
	case "v1 Secret":
		var o corev1.Secret
		err := yaml.UnmarshalStrict(doc, &o)
		m.secrets[o.Name] = o
		return err
	case "v1 Service":
		var o corev1.Service
		err := yaml.UnmarshalStrict(doc, &o)
		m.services[o.Name] = o
		return err
	case "apps/v1 StatefulSet":
		return yaml.UnmarshalStrict(doc, &m.sts)
	case "networking.k8s.io/v1 NetworkPolicy":
		var o networkingv1.NetworkPolicy
		err := yaml.UnmarshalStrict(doc, &o)
		m.policies = append(m.policies, o)
		return err
	}
	return fmt.Errorf("unexpected %s %s", head.APIVersion, head.Kind)
}

func (m manifests) container(t *testing.T) corev1.Container {
	t.Helper()
	cs := m.sts.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	return cs[0]
}

func TestProbesUseHealthAndReadiness(t *testing.T) {
	c := load(t).container(t)
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe: %+v", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe: %+v", c.ReadinessProbe)
	}
	if !contains(c.Args, "--listen=0.0.0.0:8083") || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8083 || c.Ports[0].Name != "http" {
		t.Errorf("the probes' port must be the one the daemon listens on: args %v, ports %+v", c.Args, c.Ports)
	}
}

// TestPodNameIsTheStaticMemberID: each pod's name reaches the connector as
// consumer.override.group.instance.id through ${env:POD_NAME}.
func TestPodNameIsTheStaticMemberID(t *testing.T) {
	m := load(t)
	c := m.container(t)
	var fromName bool
	for _, e := range c.Env {
		fromName = fromName || (e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name")
	}
	if !fromName {
		t.Fatalf("no POD_NAME from metadata.name in %+v", c.Env)
	}
	for name, doc := range m.configMaps["hdfs-sink-connectors"].Data {
		var conn struct {
			Name   string
			Config map[string]string
		}
		if err := json.Unmarshal([]byte(doc), &conn); err != nil {
			t.Fatalf("connector file %s: %v", name, err)
		}
		if got := conn.Config["consumer.override.group.instance.id"]; got != "${env:POD_NAME}" {
			t.Errorf("%s: group.instance.id is %q, want ${env:POD_NAME}", name, got)
		}
	}
	if m.sts.Spec.ServiceName == "" || m.services[m.sts.Spec.ServiceName].Spec.ClusterIP != "None" {
		t.Errorf("a StatefulSet's pods get stable names from a headless service: serviceName %q", m.sts.Spec.ServiceName)
	}
}

// TestSecretsAreFilesNotConfig: credentials come from the Secret's files,
// and no ConfigMap holds one.
func TestSecretsAreFilesNotConfig(t *testing.T) {
	m := load(t)
	for name, cm := range m.configMaps {
		for key, v := range cm.Data {
			for _, word := range []string{"password=", "password\"", "user.info\": \"h"} {
				if strings.Contains(v, word) {
					t.Errorf("ConfigMap %s %s holds a credential (%q)", name, key, word)
				}
			}
		}
	}
	conn := m.configMaps["hdfs-sink-connectors"].Data["orders.json"]
	for _, ref := range []string{"${file:/etc/hdfs-sink/secrets/kafka.properties:sasl.jaas.config}", "${file:/etc/hdfs-sink/secrets/registry.properties:user.info}"} {
		if !strings.Contains(conn, ref) {
			t.Errorf("connector file lacks %s", ref)
		}
		file := strings.TrimPrefix(strings.SplitN(ref, ":", 3)[1], "/etc/hdfs-sink/secrets/")
		if _, ok := m.secrets["hdfs-sink-secrets"].StringData[file]; !ok {
			t.Errorf("%s: the Secret has no %s", ref, file)
		}
	}
}

// TestMountsAndVolumesMatch: every mount has a volume, every volume names
// an object of this file, and the daemon's paths are mounted.
func TestMountsAndVolumesMatch(t *testing.T) {
	m := load(t)
	c := m.container(t)
	vols := map[string]corev1.Volume{}
	for _, v := range m.sts.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
		switch {
		case v.ConfigMap != nil && m.configMaps[v.ConfigMap.Name].Name == "":
			t.Errorf("volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
		case v.Secret != nil && m.secrets[v.Secret.SecretName].Name == "":
			t.Errorf("volume %s: no Secret %s", v.Name, v.Secret.SecretName)
		}
	}
	mounted := map[string]bool{}
	for _, vm := range c.VolumeMounts {
		if _, ok := vols[vm.Name]; !ok {
			t.Errorf("mount %s: no such volume", vm.Name)
		}
		mounted[vm.MountPath] = true
	}
	for _, want := range []string{"/etc/hdfs-sink/worker", "/etc/hdfs-sink/connectors", "/etc/hdfs-sink/secrets"} {
		if !mounted[want] {
			t.Errorf("%s is not mounted", want)
		}
	}
	if sel := m.sts.Spec.Selector.MatchLabels; sel["app.kubernetes.io/name"] != m.sts.Spec.Template.Labels["app.kubernetes.io/name"] {
		t.Errorf("selector %v does not match the pod labels %v", sel, m.sts.Spec.Template.Labels)
	}
	if g := m.sts.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g < 40 {
		t.Errorf("terminationGracePeriodSeconds must exceed the daemon's shutdown bound (>= 40 s): %v", g)
	}
}

// TestHTTPEndpointIsNotOpen: the endpoint listens on the pod's addresses,
// so the daemon must guard it (read-only or authenticated: without either
// it refuses to start), and a NetworkPolicy lets only Prometheus reach the
// pods, on the HTTP port alone.
func TestHTTPEndpointIsNotOpen(t *testing.T) {
	m := load(t)
	c := m.container(t)
	guarded := contains(c.Args, "--read-only")
	for _, a := range c.Args {
		guarded = guarded || strings.HasPrefix(a, "--rest-basic-auth-file=") || strings.HasPrefix(a, "--rest-tls-client-ca=")
	}
	if !guarded {
		t.Errorf("args %v: listening on 0.0.0.0 needs --read-only, --rest-basic-auth-file or --rest-tls-client-ca", c.Args)
	}
	if len(m.policies) != 1 {
		t.Fatalf("want one NetworkPolicy, got %d", len(m.policies))
	}
	p := m.policies[0]
	for k, v := range p.Spec.PodSelector.MatchLabels {
		if m.sts.Spec.Template.Labels[k] != v {
			t.Errorf("the policy selects %v, not the StatefulSet's pods %v", p.Spec.PodSelector.MatchLabels, m.sts.Spec.Template.Labels)
		}
	}
	if len(p.Spec.PodSelector.MatchLabels) == 0 || !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || len(p.Spec.Ingress) == 0 {
		t.Fatalf("the policy does not restrict ingress to the pods: %+v", p.Spec)
	}
	for i, rule := range p.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("ingress rule %d admits every source", i)
		}
		for _, from := range rule.From {
			if from.PodSelector == nil || len(from.PodSelector.MatchLabels) == 0 {
				t.Errorf("ingress rule %d admits every pod of %+v", i, from)
			}
		}
		if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.String() != c.Ports[0].Name {
			t.Errorf("ingress rule %d: ports %+v, want only the %s port", i, rule.Ports, c.Ports[0].Name)
		}
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
