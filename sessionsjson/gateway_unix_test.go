//go:build unix

package sessionsjson

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Gateway detection reads /proc and flock(2) evidence: unix only (gateway.go).

func TestDetectGateway(t *testing.T) {
	self := fmt.Sprintf(`{"pid": %d, "kind": "hermes-gateway", "start_time": null}`, os.Getpid())
	tests := []struct {
		name    string
		files   map[string]string
		lock    bool
		running bool
		method  string
	}{
		{"nothing", nil, false, false, MethodNone},
		{"lock free", map[string]string{"gateway.lock": self}, false, false, MethodLockFree},
		{"lock held", map[string]string{"gateway.lock": self, "gateway.pid": self}, true, true, MethodLockHeld},
		{"pid not a gateway", map[string]string{"gateway.pid": self}, false, false, MethodNone},
		{"dead pid", map[string]string{"gateway.pid": `{"pid": 2147483646}`}, false, false, MethodNone},
		{"state stopped", map[string]string{"gateway.lock": "", "gateway_state.json": `{"pid": 1, "gateway_state": "stopped"}`}, false, false, MethodLockFree},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Home{Root: t.TempDir()}
			h.Dir = h.Root
			for name, content := range tt.files {
				mustWrite(t, filepath.Join(h.Dir, name), content, 0o644)
			}
			if tt.lock {
				holdLock(t, h.GatewayLockFile())
			}
			st := DetectGateway(h)
			if st.Running != tt.running || st.Method != tt.method || st.Detail == "" {
				t.Fatalf("DetectGateway = %+v", st)
			}
			if tt.running && st.PID != os.Getpid() {
				t.Fatalf("pid = %d", st.PID)
			}
			if len(tt.files) == 0 {
				if entries, _ := os.ReadDir(h.Dir); len(entries) != 0 {
					t.Fatal("detection created files")
				}
			}
		})
	}
}

func TestDetectGatewayPIDFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the process's start time and command line come from /proc (Linux only)")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "gateway", "run.py")
	mustMkdir(t, filepath.Dir(fake))
	if err := os.Symlink(sleep, fake); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fake, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitForExec(t, cmd.Process.Pid, "gateway/run.py")
	h := Home{Root: dir, Dir: dir}
	start, _ := procStartTime(cmd.Process.Pid)
	tests := []struct {
		start   int64
		extra   string
		running bool
	}{{start, "", true}, {start + 1, "", false},
		// json.loads reads NaN and Infinity (issue 29 item 6): the record is usable.
		{start, `, "argv": [NaN, Infinity, -Infinity]`, true}}
	for _, tt := range tests {
		mustWrite(t, h.PIDFile(), fmt.Sprintf(`{"pid": %d, "start_time": %d%s}`, cmd.Process.Pid, tt.start, tt.extra), 0o644)
		if st := DetectGateway(h); st.Running != tt.running {
			t.Errorf("start_time %d%s: %+v", tt.start, tt.extra, st)
		}
	}
}

// waitForExec waits until the child's command line shows it has exec'd (right after fork it
// is still a copy of the test binary).
func waitForExec(t *testing.T, pid int, want string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(cmdline), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never showed %q in its command line", pid, want)
}

func holdLock(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second open in this process conflicts with it.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}
