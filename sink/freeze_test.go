//go:build linux

package sink

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// freezeChild is the child process: a goroutine off the main thread says
// "before", freezes, says "after" and the process exits. The main thread is
// parked, as in the daemon, so a stop sent to the process reaches the
// caller's thread late.
func freezeChild() {
	runtime.LockOSThread() // keeps the main goroutine, parked below, on the main thread
	done := make(chan struct{})
	go func() {
		os.Stdout.WriteString("before\n")
		FreezeSelf()
		os.Stdout.WriteString("after\n")
		close(done)
	}()
	<-done
	os.Exit(0)
}

// TestFreezeSelfStopsTheCaller: the fault tests freeze the daemon "before
// the rename" and look at HDFS; the caller must not run on while the rest of
// the process stops. Repeated, because the old kill(getpid()) lost the race
// only some of the time.
func TestFreezeSelfStopsTheCaller(t *testing.T) {
	for i := range 30 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), freezeChildEnv+"=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stopChild(t, cmd)
		out.(*os.File).SetReadDeadline(time.Now().Add(time.Minute))
		lines := bufio.NewReader(out)
		if l, err := lines.ReadString('\n'); l != "before\n" {
			t.Fatalf("child %d: first line %q, %v", i, l, err)
		}
		waitStopped(t, cmd.Process.Pid)
		out.(*os.File).SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if l, _ := lines.ReadString('\n'); l != "" {
			t.Fatalf("child %d: the caller ran past FreezeSelf before the process stopped (wrote %q)", i, l)
		}
		out.(*os.File).SetReadDeadline(time.Now().Add(time.Minute))
		cmd.Process.Signal(syscall.SIGCONT)
		if l, err := lines.ReadString('\n'); l != "after\n" {
			t.Fatalf("child %d: after SIGCONT: %q, %v", i, l, err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
	}
}

// stopChild ends the child when the test does, whatever state a failure
// left it in (stopped, or running past the freeze). Wait then reaps it.
func stopChild(t *testing.T, cmd *exec.Cmd) {
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// waitStopped waits until /proc says the process is stopped (state T).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	stat := fmt.Sprintf("/proc/%d/stat", pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		// pid (comm) STATE ...: comm may hold spaces, so read after the last ')'.
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "T" {
			return
		}
	}
	t.Fatalf("process %d never stopped", pid)
}
