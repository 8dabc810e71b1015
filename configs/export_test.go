package configs

// LoadPath loads connector files without a worker file: settings Connect
// keeps in the worker (bootstrap.servers, the converters) must then be in
// the connector files. See Load.
func LoadPath(p string) ([]*Connector, []Warning, error) { return Load(p, nil) }
