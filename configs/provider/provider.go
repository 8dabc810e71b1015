package configs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Config providers as in Kafka (KIP-297, KIP-421): a worker (or connector)
// file names them with config.providers=<name>,... and
// config.providers.<name>.class, and values say ${<name>:[<path>:]<key>}.
// hdfs-sink has Kafka's three: FileConfigProvider (a key of a properties
// file), EnvVarConfigProvider (an environment variable) and
// DirectoryConfigProvider (the content of a file in a directory, such as a
// Kubernetes secret mount).

const providerPackage = "org.apache.kafka.common.config.provider."

// placeholderRE is Kafka's ConfigTransformer pattern: ${provider:path:key}
// or ${provider:key}. A ${...} without a colon (hdfs-sink's ${topic}) is
// not a placeholder.
var placeholderRE = regexp.MustCompile(`\$\{([^}]*?):(?:([^}]*?):)?([^}]*?)\}`)

// provider fetches the value of one placeholder. check is what can be
// said of a placeholder without the daemon's host (its files and
// environment): the path and key's form, allowed.paths as written.
type provider interface {
	get(path, key string) (string, error)
	check(path, key string) error
}

// providers are the configured providers by name.
type providers map[string]provider

var providerClasses = map[string]func(name string, params map[string]string) (provider, error){
	"FileConfigProvider":      newFileProvider,
	"EnvVarConfigProvider":    newEnvProvider,
	"DirectoryConfigProvider": newDirProvider,
}

// parseProviders reads config.providers* from props. Errors are *FieldError
// without a connector, as the caller names the file.
func parseProviders(props map[string]string) (providers, []error) {
	names := splitList(props["config.providers"])
	ps := providers{}
	var errs []error
	for _, name := range names {
		p, err := newProvider(name, props)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ps[name] = p
	}
	return ps, errs
}

func newProvider(name string, props map[string]string) (provider, error) {
	key := "config.providers." + name + ".class"
	class := strings.TrimSpace(props[key])
	if class == "" {
		return nil, &FieldError{Key: key, Reason: fmt.Sprintf("config.providers lists %q: name its class (%sFileConfigProvider, EnvVarConfigProvider or DirectoryConfigProvider)", name, providerPackage)}
	}
	mk, ok := providerClasses[strings.TrimPrefix(class, providerPackage)]
	if !ok {
		return nil, &FieldError{Key: key, Value: class, Set: true, Reason: "must be one of Kafka's FileConfigProvider, EnvVarConfigProvider or DirectoryConfigProvider (the simple name, or the class in " + strings.TrimSuffix(providerPackage, ".") + "): hdfs-sink has no others"}
	}
	p, err := mk(name, providerParams(name, props))
	if err != nil {
		return nil, err
	}
	return p, nil
}

func providerParams(name string, props map[string]string) map[string]string {
	prefix := "config.providers." + name + ".param."
	out := map[string]string{}
	for k, v := range props {
		if p, ok := strings.CutPrefix(k, prefix); ok {
			out[p] = strings.TrimSpace(v)
		}
	}
	return out
}

// isProviderKey reports the config.providers* keys, which are never
// themselves resolved.
func isProviderKey(k string) bool {
	return k == "config.providers" || strings.HasPrefix(k, "config.providers.")
}

// placeholderError is a ${...} that does not resolve.
type placeholderError struct {
	placeholder, reason string
}

func (e *placeholderError) Error() string {
	return e.placeholder + " does not resolve: " + e.reason
}

// resolve replaces every placeholder of value. fromProvider reports that
// at least one was replaced: the result is then a secret.
func (ps providers) resolve(value string) (out string, fromProvider bool, err error) {
	var errs []error
	out = placeholderRE.ReplaceAllStringFunc(value, func(m string) string {
		sub := placeholderRE.FindStringSubmatch(m)
		v, err := ps.lookup(sub[1], sub[2], sub[3])
		if err != nil {
			errs = append(errs, &placeholderError{placeholder: m, reason: err.Error()})
			return m
		}
		fromProvider = true
		return v
	})
	return out, fromProvider, errors.Join(errs...)
}

func (ps providers) lookup(name, path, key string) (string, error) {
	p, err := ps.named(name)
	if err != nil {
		return "", err
	}
	return p.get(path, key)
}

func (ps providers) named(name string) (provider, error) {
	p, ok := ps[name]
	if !ok {
		return nil, fmt.Errorf("no config provider %q (set config.providers=%s and config.providers.%s.class in the worker file)", name, name, name)
	}
	return p, nil
}

// checkOffline checks every placeholder of value as far as it can be
// without reading what it names (check --offline: the files and the
// environment are the daemon host's); found reports that value holds one,
// and stays unresolved.
func (ps providers) checkOffline(value string) (found bool, err error) {
	var errs []error
	for _, sub := range placeholderRE.FindAllStringSubmatch(value, -1) {
		found = true
		p, err := ps.named(sub[1])
		if err == nil {
			err = p.check(sub[2], sub[3])
		}
		if err != nil {
			errs = append(errs, &placeholderError{placeholder: sub[0], reason: err.Error()})
		}
	}
	return found, errors.Join(errs...)
}

// allowedPaths is a provider's allowed.paths (KIP-993): when set, only files
// under these directories may be read.
type allowedPaths []string

func parseAllowedPaths(name, v string) (allowedPaths, error) {
	var out allowedPaths
	for _, p := range splitList(v) {
		clean := filepath.Clean(p)
		if !filepath.IsAbs(clean) {
			return nil, &FieldError{Key: "config.providers." + name + ".param.allowed.paths", Value: v, Set: true, Reason: fmt.Sprintf("%q must be an absolute path", p)}
		}
		out = append(out, clean)
	}
	return out, nil
}

// check returns the file to read for path, and refuses a path outside
// allowed.paths. Kafka compares the normalised path with the roots; here
// symbolic links are resolved too (in the path and in the roots), so that
// a link under an allowed directory cannot lead out of it, and a relative
// path, which would depend on the daemon's working directory, is refused.
// The resolved path is what the caller reads. Without allowed.paths any
// path is read as given, as in Kafka.
func (a allowedPaths) check(path string) (string, error) {
	if len(a) == 0 {
		return path, nil
	}
	clean, err := a.checkWritten(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return "", err
	}
	if !a.holds(real, resolvedRoot) {
		return "", a.outside(path, real)
	}
	return real, nil
}

// checkWritten is the part of check that needs no file: the path as
// written, cleaned, is absolute and under a root. It returns the cleaned
// path.
func (a allowedPaths) checkWritten(path string) (string, error) {
	clean := filepath.Clean(path)
	if len(a) == 0 {
		return clean, nil
	}
	if !filepath.IsAbs(clean) {
		return "", fmt.Errorf("%s is a relative path: with allowed.paths (%s) a provider reads absolute paths only", path, strings.Join(a, ","))
	}
	if !a.holds(clean, func(root string) string { return root }) {
		return "", a.outside(path, "")
	}
	return clean, nil
}

// holds reports whether p lies under one of the roots (as root maps them).
func (a allowedPaths) holds(p string, root func(string) string) bool {
	for _, r := range a {
		if rel, err := filepath.Rel(root(r), p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// resolvedRoot is an allowed directory with its symbolic links resolved
// (a root that is a link, such as /etc/secrets to /run/secrets, allows
// what it leads to); as written when it cannot be resolved.
func resolvedRoot(root string) string {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return root
}

func (a allowedPaths) outside(path, real string) error {
	if real != "" && real != path {
		path += " (a link to " + real + ")"
	}
	return fmt.Errorf("%s is outside allowed.paths (%s)", path, strings.Join(a, ","))
}

// fileProvider is FileConfigProvider: ${file:<properties file>:<key>}.
type fileProvider struct{ allowed allowedPaths }

func newFileProvider(name string, params map[string]string) (provider, error) {
	a, err := parseAllowedPaths(name, params["allowed.paths"])
	return fileProvider{allowed: a}, err
}

func (p fileProvider) check(path, _ string) error {
	if path == "" {
		return errors.New("FileConfigProvider needs a file: ${file:/path/to/file.properties:key}")
	}
	_, err := p.allowed.checkWritten(path)
	return err
}

func (p fileProvider) get(path, key string) (string, error) {
	if err := p.check(path, key); err != nil {
		return "", err
	}
	real, err := p.allowed.check(path)
	if err != nil {
		return "", err
	}
	data, err := readLimited(real)
	if err != nil {
		return "", err
	}
	props, err := parseProperties(path, data)
	if err != nil {
		return "", err
	}
	for _, pr := range props {
		if pr.key == key {
			return pr.value, nil
		}
	}
	return "", fmt.Errorf("%s has no key %q", path, key)
}

// dirProvider is DirectoryConfigProvider: ${directory:<dir>:<file>}, the
// file's content as it is (Kafka does not trim it).
type dirProvider struct{ allowed allowedPaths }

func newDirProvider(name string, params map[string]string) (provider, error) {
	a, err := parseAllowedPaths(name, params["allowed.paths"])
	return dirProvider{allowed: a}, err
}

func (p dirProvider) check(dir, file string) error {
	if dir == "" {
		return errors.New("DirectoryConfigProvider needs a directory: ${directory:/path/to/dir:file}")
	}
	if strings.ContainsRune(file, filepath.Separator) || file == ".." {
		return fmt.Errorf("%q must be a file name in %s", file, dir)
	}
	_, err := p.allowed.checkWritten(filepath.Join(dir, file))
	return err
}

func (p dirProvider) get(dir, file string) (string, error) {
	if err := p.check(dir, file); err != nil {
		return "", err
	}
	path := filepath.Join(dir, file)
	real, err := p.allowed.check(path)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	data, err := readLimited(real)
	return string(data), err
}

// envProvider is EnvVarConfigProvider: ${env:<variable>}, limited to the
// names allowlist.pattern matches (whole name, as Kafka matches it).
type envProvider struct{ allow *regexp.Regexp }

// lookupEnv is os.LookupEnv; tests replace it.
var lookupEnv = os.LookupEnv

func newEnvProvider(name string, params map[string]string) (provider, error) {
	pat, ok := params["allowlist.pattern"]
	if !ok {
		pat = ".*"
	}
	re, err := regexp.Compile(`^(?:` + pat + `)$`)
	if err != nil {
		return nil, &FieldError{Key: "config.providers." + name + ".param.allowlist.pattern", Value: pat, Set: true, Reason: "must be a regular expression: " + err.Error()}
	}
	return envProvider{allow: re}, nil
}

func (p envProvider) check(path, key string) error {
	if path != "" {
		return fmt.Errorf("EnvVarConfigProvider takes no path (write ${env:%s})", key)
	}
	if !p.allow.MatchString(key) {
		return fmt.Errorf("environment variable %s does not match allowlist.pattern", key)
	}
	return nil
}

func (p envProvider) get(path, key string) (string, error) {
	if err := p.check(path, key); err != nil {
		return "", err
	}
	v, ok := lookupEnv(key)
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set", key)
	}
	return v, nil
}
