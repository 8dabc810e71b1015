package hive

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Site is what hdfs-sink takes from hive.conf.dir/hive-site.xml: where the
// metastore is and how to talk to it.
type Site struct {
	File string
	// URIs is hive.metastore.uris as the file has it ("" when unset).
	URIs string
	// SASL and SSL are hive.metastore.sasl.enabled and hive.metastore.use.SSL.
	SASL, SSL bool
}

// ErrUnsupportedSite is a hive-site.xml asking for a transport this client
// does not have.
var ErrUnsupportedSite = errors.New("the metastore client of hdfs-sink speaks plain Thrift only")

// LoadSite reads dir/hive-site.xml. Of its many settings hdfs-sink uses
// hive.metastore.uris (when the connector file sets none) and refuses
// SASL and SSL, which its client cannot speak; the rest are Hive's own. A missing file is an error: the
// reference only logs a warning and carries on with defaults.
func LoadSite(dir string) (Site, error) {
	s := Site{File: filepath.Join(dir, "hive-site.xml")}
	props, err := readSiteXML(s.File)
	if err != nil {
		return s, fmt.Errorf("hive.conf.dir %s: %w", dir, err)
	}
	s.URIs = strings.TrimSpace(props["hive.metastore.uris"])
	s.SASL = strings.EqualFold(strings.TrimSpace(props["hive.metastore.sasl.enabled"]), "true")
	s.SSL = strings.EqualFold(strings.TrimSpace(props["hive.metastore.use.SSL"]), "true")
	return s, s.supported()
}

func (s Site) supported() error {
	switch {
	case s.SASL:
		return fmt.Errorf("%s: hive.metastore.sasl.enabled is true (Kerberos): %w", s.File, ErrUnsupportedSite)
	case s.SSL:
		return fmt.Errorf("%s: hive.metastore.use.SSL is true: %w", s.File, ErrUnsupportedSite)
	}
	return nil
}

// readSiteXML reads a Hadoop-style <configuration><property> file.
func readSiteXML(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Property []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(map[string]string, len(doc.Property))
	for _, p := range doc.Property {
		out[strings.TrimSpace(p.Name)] = p.Value
	}
	return out, nil
}

// CheckURIs validates a hive.metastore.uris value as Dial reads it.
func CheckURIs(uris string) error {
	_, err := parseURIs(uris)
	return err
}
