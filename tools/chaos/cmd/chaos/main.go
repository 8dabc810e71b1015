// Command chaos runs hdfs-sink's fault harness (package chaos): the fault
// catalogue against real services, or the soak. See docs/reliability.md.
//
//	go run ./tools/chaos/cmd/chaos faults [-only a,b] [-hold 30s] [-config staging.json]
//	go run ./tools/chaos/cmd/chaos soak -duration 2h [-config staging.json]
//	go run ./tools/chaos/cmd/chaos list
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hdfs-sink/hdfs-sink/tools/chaos"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "faults":
		err = faults(ctx, os.Args[2:])
	case "soak":
		err = soak(ctx, os.Args[2:])
	case "list":
		for _, f := range chaos.Catalogue() {
			fmt.Printf("%-20s %s\n", f.Name, f.What)
		}
	default:
		usage()
	}
	if err != nil {
		log.Fatal(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: chaos faults|soak|list [flags]   (chaos <command> -h for the flags)")
	os.Exit(2)
}

// common are the flags both commands take.
type common struct {
	config, dir, bin, netns string
	race                    bool
}

func (c *common) register(fs *flag.FlagSet, what string) {
	fs.StringVar(&c.config, "config", "", "JSON file naming the services and the commands that hurt them (default: testenv/testenv.sh's services)")
	fs.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "hdfs-sink-"+what+"-"+time.Now().Format("20060102-150405")), "local directory for connector files, daemon logs and results")
	fs.StringVar(&c.bin, "bin", "", "hdfs-sink binary to test (default: built from this checkout)")
	fs.StringVar(&c.netns, "netns", "", `name of the daemon's network namespace ("none": the harness's own; no network faults)`)
	fs.BoolVar(&c.race, "race", false, "build hdfs-sink with the race detector")
}

func (c *common) options() (chaos.Options, error) {
	cfg, err := chaos.LoadConfig(c.config)
	if err != nil {
		return chaos.Options{}, err
	}
	if c.netns != "" {
		cfg.Netns = c.netns
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return chaos.Options{}, err
	}
	bin := c.bin
	if bin == "" {
		if bin, err = build(c.dir, c.race); err != nil {
			return chaos.Options{}, err
		}
	}
	return chaos.Options{Config: cfg, Bin: bin, Dir: c.dir, Logf: log.Printf}, nil
}

// build compiles cmd/hdfs-sink into dir, with the fault-injection
// switches some faults use (-tags faults; a release build has none).
func build(dir string, race bool) (string, error) {
	root, err := chaos.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hdfs-sink")
	args := []string{"build", "-tags", "faults", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/hdfs-sink")...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	return bin, cmd.Run()
}

func faults(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("faults", flag.ExitOnError)
	var c common
	c.register(fs, "faults")
	only := fs.String("only", "", "comma-separated fault names (default: all; see `chaos list`)")
	hold := fs.Duration("hold", 30*time.Second, "how long each fault lasts (faults that must outlast a timeout hold longer)")
	within := fs.Duration("recover-within", 5*time.Minute, "the correctness bound on recovery after the service returns")
	backoff := fs.Int("retry-backoff-ms", 5000, "the connectors' retry.backoff.ms")
	fs.Parse(args)
	opts, err := c.options()
	if err != nil {
		return err
	}
	opts.Hold, opts.RecoverWithin, opts.RetryBackoffMs = *hold, *within, *backoff
	if *only != "" {
		opts.Faults = strings.Split(*only, ",")
	}
	h, err := chaos.NewHarness(opts)
	if err != nil {
		return err
	}
	defer h.Close()
	res, err := h.RunFaults(ctx)
	fmt.Print(chaos.Table(res))
	log.Printf("results and daemon logs in %s", opts.Dir)
	if err == nil && !chaos.AllPassed(res) {
		err = fmt.Errorf("some faults failed")
	}
	return err
}

func soak(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	var c common
	c.register(fs, "soak")
	var so chaos.SoakOptions
	fs.DurationVar(&so.Duration, "duration", 2*time.Hour, "how long traffic flows")
	fs.DurationVar(&so.FaultEvery, "fault-every", 4*time.Minute, "a service fault this often")
	fs.DurationVar(&so.KillEvery, "kill-every", 30*time.Minute, "a SIGKILL of hdfs-sink this often")
	fs.DurationVar(&so.SampleEvery, "sample-every", 15*time.Second, "how often RSS, goroutines, descriptors and connections are sampled")
	fs.DurationVar(&so.Hold, "hold", 30*time.Second, "how long each fault lasts")
	faults := fs.String("faults", strings.Join(chaos.SoakFaults, ","), "the faults to cycle through")
	rate := fs.Int("rate", 100, "records per second")
	fs.Parse(args)
	opts, err := c.options()
	if err != nil {
		return err
	}
	opts.Rate, so.Faults = *rate, strings.Split(*faults, ",")
	h, err := chaos.NewHarness(opts)
	if err != nil {
		return err
	}
	defer h.Close()
	sum, err := h.Soak(ctx, so)
	log.Printf("soak: %d records in %d files, exactly once: %s; %d hive partitions for %d hour directories; output in %s",
		sum.Records, sum.Files, sum.ExactlyOnce, sum.HivePartitions, sum.HourDirs, opts.Dir)
	for _, lt := range sum.Lifetimes {
		log.Printf("soak: pid %d %.0f-%.0fs: %d samples, leak suspicions: %v", lt.Pid, lt.From, lt.To, lt.Samples, lt.LeakSuspicions)
	}
	return err
}
