//go:build unix

package sessionsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// gatewayCmdlines are the command-line fragments the runtime accepts as a gateway.
var gatewayCmdlines = []string{"hermes_cli.main gateway", "hermes_cli/main.py gateway", "hermes gateway", "gateway/run.py"}

// pidRecord is the gateway.pid / gateway_state.json content the detection needs.
type pidRecord struct {
	PID          int
	StartTime    *int64
	GatewayState *string
}

// DetectGateway decides whether a gateway runs on h (upstream gateway/status.py, gateway.lock and gateway.pid). It never creates, modifies or
// deletes any of the gateway's files; a free gateway.lock is locked and released at once.
func DetectGateway(h Home) GatewayStatus {
	held, err := probeLock(h.GatewayLockFile())
	switch {
	case errors.Is(err, os.ErrNotExist):
		st := checkPIDRecord(h.PIDFile(), MethodPIDFile)
		if st.Running {
			return st
		}
		return checkState(h, MethodNone, "no gateway.lock; "+st.Detail)
	case err != nil:
		return GatewayStatus{Running: true, Method: MethodLockHeld, Detail: "cannot probe gateway.lock, assuming running: " + err.Error()}
	case held:
		pid := firstPID(h.PIDFile(), h.GatewayLockFile())
		return GatewayStatus{Running: true, Method: MethodLockHeld, PID: pid, Detail: fmt.Sprintf("gateway.lock is locked (pid %d)", pid)}
	}
	return checkState(h, MethodLockFree, "gateway.lock is not locked")
}

// probeLock reports whether another process holds an flock on path. The open never blocks
// (a named pipe there would otherwise wait for a writer).
func probeLock(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	held, err := TryLock(f)
	if held {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock %s: %w", path, err)
	}
	return false, Unlock(f)
}

// readPIDRecord reads gateway.pid, gateway.lock's record or gateway_state.json as the
// runtime's _read_pid_record loads them (json.loads: LoadJSON, NaN and Infinity included): an
// object with an integer pid, or a bare pid.
func readPIDRecord(path string) (pidRecord, bool) {
	data, err := ReadRegularFile(path, MaxSmallFileBytes)
	if err != nil {
		return pidRecord{}, false
	}
	v, err := LoadJSON(bytes.TrimSpace(data))
	if err != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && n > 0 {
			return pidRecord{PID: n}, true
		}
		return pidRecord{}, false
	}
	var rec pidRecord
	switch x := v.(type) {
	case json.Number: // a bare pid
		rec.PID = pidOf(x)
	case map[string]any:
		n, _ := x["pid"].(json.Number)
		rec.PID = pidOf(n)
		switch st := x["start_time"].(type) {
		case nil:
		case json.Number:
			i, err := st.Int64()
			if err != nil {
				return pidRecord{}, false // not an integer: no usable record, as before
			}
			rec.StartTime = &i
		default:
			return pidRecord{}, false
		}
		switch state := x["gateway_state"].(type) {
		case nil:
		case string:
			rec.GatewayState = &state
		default:
			return pidRecord{}, false
		}
	}
	return rec, rec.PID > 0
}

// pidOf is a JSON integer's value as a pid, 0 for any other number.
func pidOf(n json.Number) int {
	i, err := strconv.Atoi(string(n))
	if err != nil {
		return 0
	}
	return i
}

func firstPID(paths ...string) int {
	for _, p := range paths {
		if rec, ok := readPIDRecord(p); ok {
			return rec.PID
		}
	}
	return 0
}

// checkState applies the runtime's gateway_state.json fallback.
func checkState(h Home, method, why string) GatewayStatus {
	rec, ok := readPIDRecord(h.GatewayStateFile())
	if !ok || rec.GatewayState == nil {
		return GatewayStatus{Method: method, Detail: why + "; no usable gateway_state.json"}
	}
	switch *rec.GatewayState {
	case "stopped", "startup_failed":
		return GatewayStatus{Method: method, Detail: why + "; gateway_state.json says " + *rec.GatewayState}
	}
	st := checkProcess(rec, MethodGatewayState)
	if !st.Running {
		st.Method, st.Detail = method, why+"; "+st.Detail
	}
	return st
}

func checkPIDRecord(path, method string) GatewayStatus {
	rec, ok := readPIDRecord(path)
	if !ok {
		return GatewayStatus{Method: method, Detail: "no usable gateway.pid"}
	}
	return checkProcess(rec, method)
}

// checkProcess verifies that the recorded pid is a live gateway process.
func checkProcess(rec pidRecord, method string) GatewayStatus {
	st := GatewayStatus{Method: method, PID: rec.PID}
	if err := syscall.Kill(rec.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		st.Detail = fmt.Sprintf("pid %d from %s is not alive", rec.PID, method)
		return st
	}
	if start, ok := procStartTime(rec.PID); ok && rec.StartTime != nil && *rec.StartTime != start {
		st.Detail = fmt.Sprintf("pid %d from %s was reused (start_time %d != %d)", rec.PID, method, start, *rec.StartTime)
		return st
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", rec.PID))
	if err != nil {
		st.Running = true
		st.Detail = fmt.Sprintf("pid %d from %s is alive (command line unreadable, assuming a gateway)", rec.PID, method)
		return st
	}
	line := strings.ReplaceAll(string(cmd), "\x00", " ")
	for _, frag := range gatewayCmdlines {
		if strings.Contains(line, frag) {
			st.Running = true
			st.Detail = fmt.Sprintf("pid %d from %s is a live gateway", rec.PID, method)
			return st
		}
	}
	st.Detail = fmt.Sprintf("pid %d from %s is alive but not a gateway", rec.PID, method)
	return st
}

// procStartTime reads field 22 of /proc/<pid>/stat.
func procStartTime(pid int) (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(fields[19], 10, 64)
	return n, err == nil
}
