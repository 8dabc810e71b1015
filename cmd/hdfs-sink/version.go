package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Stamped at build time by the Makefile and packaging/image.sh:
//
//	-ldflags "-X main.version=$(git describe) -X main.commit=… -X main.date=…"
//
// A plain `go build` in a git checkout still gets commit and date from the
// module's build info (vcs.revision, vcs.time), which debug.ReadBuildInfo
// returns.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// buildInfo is what `hdfs-sink version` prints.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	Modified  bool   `json:"modified,omitempty"` // built from a work tree with changes
	GoVersion string `json:"go_version"`
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && b.Commit == "":
			b.Commit = s.Value
		case s.Key == "vcs.time" && b.Date == "":
			b.Date = s.Value
		case s.Key == "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func (b buildInfo) String() string {
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	dirty := ""
	if b.Modified {
		dirty = " (modified)"
	}
	return fmt.Sprintf("hdfs-sink %s commit %s%s built %s %s", b.Version, orUnknown(b.Commit), dirty, orUnknown(b.Date), b.GoVersion)
}

// cmdVersion is `hdfs-sink version [--json]`.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *asJSON {
		printJSON(stdout, currentBuild())
		return exitOK
	}
	fmt.Fprintln(stdout, currentBuild())
	return exitOK
}
