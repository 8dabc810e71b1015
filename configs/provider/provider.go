// Package provider resolves config provider placeholders as Kafka does
// (KIP-297, KIP-421): the providers a worker declares with
// config.providers*, values that say ${<name>:[<path>:]<key>}, the three
// providers hdfs-sink has (Kafka's file, environment variable and
// directory providers), and the bounds on what they may read
// (allowed.paths, KIP-993; allowlist.pattern). It knows nothing of what
// the keys mean: configs decides which keys are resolved, and by whose
// providers.
package provider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

// A worker (or connector) file names providers with
// config.providers=<name>,... and config.providers.<name>.class, and
// values say ${<name>:[<path>:]<key>}. hdfs-sink has Kafka's three:
// FileConfigProvider (a key of a properties file), EnvVarConfigProvider (an
// environment variable) and DirectoryConfigProvider (the content of a file
// in a directory, such as a Kubernetes secret mount).

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

// Set are the configured providers by name. A nil Set has none.
type Set map[string]provider

// LookupEnv is how EnvVarConfigProvider reads a variable (os.LookupEnv).
type LookupEnv func(string) (string, bool)

var providerClasses = map[string]func(name string, params map[string]string, env LookupEnv) (provider, error){
	"FileConfigProvider":      newFileProvider,
	"EnvVarConfigProvider":    newEnvProvider,
	"DirectoryConfigProvider": newDirProvider,
}

// ParamError is a config.providers* key with a bad or missing value. It
// names no file: the caller does.
type ParamError struct {
	Key, Value string
	Set        bool   // false: the key is missing
	Reason     string // what is allowed or required
}

func (e *ParamError) Error() string {
	if !e.Set {
		return fmt.Sprintf("%s is not set: %s", e.Key, e.Reason)
	}
	return fmt.Sprintf("%s = %q: %s", e.Key, e.Value, e.Reason)
}

// Parse reads config.providers* from props; env is how the environment
// variable provider reads a variable. Errors are *ParamError.
func Parse(props map[string]string, env LookupEnv) (Set, []error) {
	names := splitList(props["config.providers"])
	ps := Set{}
	var errs []error
	for _, name := range names {
		p, err := newProvider(name, props, env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ps[name] = p
	}
	return ps, errs
}

func newProvider(name string, props map[string]string, env LookupEnv) (provider, error) {
	key := "config.providers." + name + ".class"
	class := strings.TrimSpace(props[key])
	if class == "" {
		return nil, &ParamError{Key: key, Reason: fmt.Sprintf("config.providers lists %q: name its class (%sFileConfigProvider, EnvVarConfigProvider or DirectoryConfigProvider)", name, providerPackage)}
	}
	mk, ok := providerClasses[strings.TrimPrefix(class, providerPackage)]
	if !ok {
		return nil, &ParamError{Key: key, Value: class, Set: true, Reason: "must be one of Kafka's FileConfigProvider, EnvVarConfigProvider or DirectoryConfigProvider (the simple name, or the class in " + strings.TrimSuffix(providerPackage, ".") + "): hdfs-sink has no others"}
	}
	p, err := mk(name, providerParams(name, props), env)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// splitList splits a comma list, trimming items and dropping empty ones.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
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

// IsKey reports the config.providers* keys, which are never themselves
// resolved.
func IsKey(k string) bool {
	return k == "config.providers" || strings.HasPrefix(k, "config.providers.")
}

// placeholderError is a ${...} that does not resolve.
type placeholderError struct {
	placeholder, reason string
}

func (e *placeholderError) Error() string {
	return e.placeholder + " does not resolve: " + e.reason
}

// IsReference reports whether v is exactly one config provider placeholder
// (${file:/path:key}, ${env:VAR}, ...): a reference to a secret, not a
// secret, so it can be shown as written.
func IsReference(v string) bool {
	v = strings.TrimSpace(v)
	loc := placeholderRE.FindStringIndex(v)
	return loc != nil && loc[0] == 0 && loc[1] == len(v)
}

// Resolve replaces every placeholder of value. fromProvider reports that
// at least one was replaced.
func (ps Set) Resolve(value string) (out string, fromProvider bool, err error) {
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

func (ps Set) lookup(name, path, key string) (string, error) {
	p, err := ps.named(name)
	if err != nil {
		return "", err
	}
	return p.get(path, key)
}

func (ps Set) named(name string) (provider, error) {
	p, ok := ps[name]
	if !ok {
		return nil, fmt.Errorf("no config provider %q (set config.providers=%s and config.providers.%s.class in the worker file)", name, name, name)
	}
	return p, nil
}

// CheckOffline checks every placeholder of value as far as it can be
// without reading what it names (check --offline: the files and the
// environment are the daemon host's); found reports that value holds one,
// and stays unresolved.
func (ps Set) CheckOffline(value string) (found bool, err error) {
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
			return nil, &ParamError{Key: "config.providers." + name + ".param.allowed.paths", Value: v, Set: true, Reason: fmt.Sprintf("%q must be an absolute path", p)}
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

func newFileProvider(name string, params map[string]string, _ LookupEnv) (provider, error) {
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
	data, err := syntax.ReadFile(real)
	if err != nil {
		return "", err
	}
	props, err := syntax.ParseProperties(path, data)
	if err != nil {
		return "", err
	}
	for _, pr := range props {
		if pr.Key == key {
			return pr.Value, nil
		}
	}
	return "", fmt.Errorf("%s has no key %q", path, key)
}

// dirProvider is DirectoryConfigProvider: ${directory:<dir>:<file>}, the
// file's content as it is (Kafka does not trim it).
type dirProvider struct{ allowed allowedPaths }

func newDirProvider(name string, params map[string]string, _ LookupEnv) (provider, error) {
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
	data, err := syntax.ReadFile(real)
	return string(data), err
}

// envProvider is EnvVarConfigProvider: ${env:<variable>}, limited to the
// names allowlist.pattern matches (whole name, as Kafka matches it).
type envProvider struct {
	allow  *regexp.Regexp
	lookup LookupEnv
}

func newEnvProvider(name string, params map[string]string, env LookupEnv) (provider, error) {
	pat, ok := params["allowlist.pattern"]
	if !ok {
		pat = ".*"
	}
	re, err := regexp.Compile(`^(?:` + pat + `)$`)
	if err != nil {
		return nil, &ParamError{Key: "config.providers." + name + ".param.allowlist.pattern", Value: pat, Set: true, Reason: "must be a regular expression: " + err.Error()}
	}
	return envProvider{allow: re, lookup: env}, nil
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
	v, ok := p.lookup(key)
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set", key)
	}
	return v, nil
}
