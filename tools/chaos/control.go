package chaos

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotConfigured is returned for an action that has no command: the
// fault that needs it is reported as not run, never as passed.
var ErrNotConfigured = errors.New("no command configured for this action")

// Control performs Actions on the services.
type Control struct {
	cmds    map[string]string
	testenv string // testenv/testenv.sh, "" when the test environment is not used
}

// NewControl builds the commands: the config's, then the test
// environment's for what the config leaves out.
func NewControl(c Config, repoRoot string) *Control {
	ctl := &Control{cmds: map[string]string{}}
	if !c.NoTestenv {
		ctl.testenv = filepath.Join(repoRoot, "testenv", "testenv.sh")
		for _, a := range Actions {
			ctl.cmds[a] = ctl.testenvCommand(a)
		}
	}
	for a, cmd := range c.Commands {
		ctl.cmds[a] = cmd
	}
	return ctl
}

// testenvCommand is how testenv.sh performs action a.
func (ctl *Control) testenvCommand(a string) string {
	t := shellQuote(ctl.testenv)
	switch a {
	case "ha.failover":
		return t + " ha-failover"
	case "ha.kill-active":
		return t + " ha-kill-active"
	case "ha.start":
		return t + " ha-up"
	case "ha.datanode.kill":
		return t + " ha-datanode kill"
	case "ha.datanode.decommission":
		return t + " ha-datanode decommission"
	case "ha.datanode.recommission":
		return t + " ha-datanode recommission"
	case "ha.datanode.await-dead":
		return t + " ha-datanode await-dead"
	}
	svc, verb, _ := strings.Cut(a, ".")
	switch verb {
	case "kill":
		return t + " signal " + svc + " KILL"
	case "stop":
		return t + " signal " + svc + " STOP"
	case "cont":
		return t + " signal " + svc + " CONT"
	case "start":
		return t + " up"
	case "fill":
		return t + " fill-datanode"
	case "free":
		return t + " free-datanode"
	}
	return t + " dfsadmin" // "dfsadmin"
}

// Has reports whether action a can be performed.
func (ctl *Control) Has(a string) bool { return ctl.cmds[a] != "" }

// Do performs action a with args, within timeout, and returns its output.
func (ctl *Control) Do(ctx context.Context, timeout time.Duration, a string, args ...string) (string, error) {
	cmd := ctl.cmds[a]
	if cmd == "" {
		return "", fmt.Errorf("%s: %w", a, ErrNotConfigured)
	}
	for _, arg := range args {
		cmd += " " + shellQuote(arg)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", cmd).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s (%s): %v: %s", a, cmd, err, lastLines(string(out), 15))
	}
	return string(out), nil
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
