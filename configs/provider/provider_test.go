package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func mustRE(s string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + s + `)$`) }

func TestIsReference(t *testing.T) {
	for v, want := range map[string]bool{
		"${file:/etc/s.properties:pw}": true,
		" ${env:PW} ":                  true,
		"${directory:/run/secrets:pw}": true,
		"svc:${file:/etc/s:pw}":        false,
		"${file:/a:b}${file:/c:d}":     false,
		"${topic}":                     false,
		"s3cret":                       false,
		"":                             false,
	} {
		if got := IsReference(v); got != want {
			t.Errorf("IsReference(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestProviderAllowedPaths: with allowed.paths (KIP-993) no resolution
// leaves the allowed directories, whether by "..", by a symbolic link
// inside them or by a relative path; links that stay inside (a Kubernetes
// secret mount's ..data) and an allowed directory that is itself a link
// are followed.
func TestProviderAllowedPaths(t *testing.T) {
	base := t.TempDir()
	allowed, outside := filepath.Join(base, "secrets"), filepath.Join(base, "other")
	for _, d := range []string{allowed, outside, filepath.Join(allowed, "..2024_01_01"), filepath.Join(base, "secrets-other")} {
		mkdir(t, d)
	}
	writeFile(t, filepath.Join(allowed, "kafka.properties"), "flush=ten\n")
	writeFile(t, filepath.Join(allowed, "..2024_01_01", "pw"), "mounted")
	writeFile(t, filepath.Join(outside, "kafka.properties"), "flush=stolen\n")
	writeFile(t, filepath.Join(outside, "pw"), "stolen")
	writeFile(t, filepath.Join(base, "secrets-other", "kafka.properties"), "flush=stolen\n")
	symlink(t, "..2024_01_01", filepath.Join(allowed, "..data"))
	symlink(t, "..data/pw", filepath.Join(allowed, "pw"))
	symlink(t, filepath.Join(outside, "kafka.properties"), filepath.Join(allowed, "leak.properties"))
	symlink(t, filepath.Join(outside, "pw"), filepath.Join(allowed, "leak"))
	symlink(t, outside, filepath.Join(allowed, "sub"))
	symlink(t, allowed, filepath.Join(base, "link-to-secrets"))

	file, err := newFileProvider("file", map[string]string{"allowed.paths": allowed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := newDirProvider("directory", map[string]string{"allowed.paths": allowed}, nil)
	viaLink, _ := newFileProvider("file", map[string]string{"allowed.paths": filepath.Join(base, "link-to-secrets")}, nil)
	rel, _ := filepath.Rel(mustGetwd(t), filepath.Join(allowed, "kafka.properties"))
	for _, tc := range []struct {
		name      string
		get       func() (string, error)
		want, err string
	}{
		{"file inside", func() (string, error) { return file.get(filepath.Join(allowed, "kafka.properties"), "flush") }, "ten", ""},
		{"file through ..", func() (string, error) {
			return file.get(filepath.Join(allowed, "../other/kafka.properties"), "flush")
		}, "", "outside allowed.paths"},
		{"sibling with the root as prefix", func() (string, error) {
			return file.get(filepath.Join(base, "secrets-other", "kafka.properties"), "flush")
		}, "", "outside allowed.paths"},
		{"file link leading out", func() (string, error) { return file.get(filepath.Join(allowed, "leak.properties"), "flush") }, "", "(a link to " + filepath.Join(outside, "kafka.properties") + ") is outside allowed.paths"},
		{"directory link leading out", func() (string, error) { return file.get(filepath.Join(allowed, "sub", "kafka.properties"), "flush") }, "", "is outside allowed.paths"},
		{"relative path", func() (string, error) { return file.get(rel, "flush") }, "", "is a relative path"},
		{"allowed root is a link", func() (string, error) {
			return viaLink.get(filepath.Join(base, "link-to-secrets", "kafka.properties"), "flush")
		}, "ten", ""},
		{"directory provider, link inside (Kubernetes mount)", func() (string, error) { return dir.get(allowed, "pw") }, "mounted", ""},
		{"directory provider, link leading out", func() (string, error) { return dir.get(allowed, "leak") }, "", "is outside allowed.paths"},
		{"directory provider, directory through ..", func() (string, error) { return dir.get(filepath.Join(allowed, "..", "other"), "pw") }, "", "is outside allowed.paths"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.get()
			switch {
			case tc.err == "" && (err != nil || v != tc.want):
				t.Errorf("got %q, %v; want %q", v, err, tc.want)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %q, %v; want an error containing %q", v, err, tc.err)
			case strings.Contains(v, "stolen"):
				t.Errorf("read outside allowed.paths: %q", v)
			}
		})
	}
	if _, err := newFileProvider("file", map[string]string{"allowed.paths": "relative/dir"}, nil); err == nil {
		t.Fatal("a relative allowed.paths was accepted")
	}
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestDirectoryProviderRefusesPaths(t *testing.T) {
	p, _ := newDirProvider("directory", nil, nil)
	for _, file := range []string{"../kafka.properties", "", "dir"} {
		if _, err := p.get("../testdata/secrets", file); err == nil {
			t.Errorf("directory provider read %q", file)
		}
	}
}

// TestPlaceholderSyntax: Kafka's pattern; ${topic} is not a placeholder.
func TestPlaceholderSyntax(t *testing.T) {
	lookupEnv := func(k string) (string, bool) { return "<" + k + ">", true }
	ps := Set{"env": envProvider{allow: mustRE(".*"), lookup: lookupEnv}}
	for in, want := range map[string]string{
		"${topic}":                "${topic}",
		"a-${env:X}-b-${env:Y}":   "a-<X>-b-<Y>",
		"${env:X}/${topic}":       "<X>/${topic}",
		"plain value, no ${ here": "plain value, no ${ here",
	} {
		got, _, err := ps.Resolve(in)
		if err != nil || got != want {
			t.Errorf("resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
