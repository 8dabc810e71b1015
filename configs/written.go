package configs

import "fmt"

// Written is connector name's settings as its file states them: no
// placeholder resolved, no worker setting and no default applied. It is
// what a change of some keys (PATCH /connectors/<name>/config) starts
// from, so that a ${file:…} reference is written back as a reference,
// never as the secret it resolves to. The file may hold several
// connectors (an export); data is its content, source names it. As in
// Connect's config map, "name" is one of the keys.
func Written(source string, data []byte, name string) (map[string]string, error) {
	rcs, err := splitConnectors(source, data)
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		if rc.name == name {
			out := make(map[string]string, len(rc.raw)+1)
			for k, v := range rc.raw {
				out[k] = v
			}
			out["name"] = name
			return out, nil
		}
	}
	return nil, &FileError{Source: source, Err: fmt.Errorf("holds no connector %q", name)}
}
