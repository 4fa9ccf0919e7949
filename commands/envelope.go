package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
)

// envelope is the one JSON document printed by --json.
type envelope struct {
	Command        string            `json:"command"`
	Home           string            `json:"home"`
	Paths          map[string]string `json:"paths"`
	Now            string            `json:"now"`
	NowUnix        float64           `json:"now_unix"`
	GatewayRunning bool              `json:"gateway_running"`
	Gateway        any               `json:"gateway"`
	Storage        string            `json:"storage"`
	Generation     string            `json:"generation"`
	SchemaVersion  *int              `json:"schema_version"`
	SchemaKnown    bool              `json:"schema_known"`
	Applied        bool              `json:"applied"`
	Findings       []check.Finding   `json:"findings"`
	Changes        []repair.Change   `json:"changes"`
	Journal        *string           `json:"journal"`
	Journals       []string          `json:"journals"`
	Error          *errorJSON        `json:"error"`
	ExitCode       int               `json:"exit_code"`
	Version        string            `json:"version"`
	Data           any               `json:"data"`
}

// errorJSON is the envelope's error: what ended the run, null on success.
type errorJSON struct {
	Code    int    `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// gatewayJSON is how the envelope says whether a gateway runs and how that was decided.
type gatewayJSON struct {
	Running bool   `json:"running"`
	Method  string `json:"method"`
	PID     int    `json:"pid"`
	Detail  string `json:"detail"`
}

// result is what a command hands to the printer.
type result struct {
	applied  bool
	findings []check.Finding
	changes  []repair.Change
	journals []string // every journal written, oldest first
	exitCode int
	data     any
}

// outcomeResult is the printable form of a repair's outcome: data.batches lists the
// transactions of a state.db repair.
func outcomeResult(out repair.Outcome) result {
	res := result{applied: out.Applied, findings: out.Findings, changes: out.Changes, journals: out.Journals}
	if len(out.Batches) > 0 {
		res.data = map[string][]*repair.BatchRecord{"batches": out.Batches}
	}
	return res
}

func newEnvelope(h *home.Home, o *options, r result) envelope {
	env := envelope{
		Command:  o.Command,
		Home:     o.Home.Dir,
		Paths:    homePaths(o),
		Now:      formatInstant(o.Clock.UnixMicros),
		NowUnix:  o.Clock.Unix,
		Applied:  r.applied,
		Findings: orEmpty(r.findings),
		Changes:  orEmpty(r.changes),
		Journals: orEmpty(r.journals),
		ExitCode: r.exitCode,
		Version:  version(),
		Data:     r.data,
	}
	if n := len(r.journals); n > 0 {
		env.Journal = &r.journals[n-1]
	}
	if h != nil {
		g := h.Gateway
		env.GatewayRunning = g.Running
		env.Gateway = gatewayJSON{Running: g.Running, Method: g.Method, PID: g.PID, Detail: g.Detail}
		env.Storage = h.Storage.String()
		env.Generation = string(h.Gen)
		if h.DB != nil {
			ver := h.Schema.Version
			env.SchemaVersion = &ver
			env.SchemaKnown = h.Schema.Known
		}
	}
	return env
}

func homePaths(o *options) map[string]string {
	h := o.Home
	if h.Dir == "" {
		return map[string]string{}
	}
	return map[string]string{
		"home":                   h.Dir,
		"root":                   h.Root,
		"profile":                h.Profile,
		"sessions_json":          h.SessionsJSON(),
		"state_db":               h.StateDB(),
		"restart_failure_counts": h.CountsFile(),
		"clean_shutdown":         h.CleanShutdownFile(),
		"gateway_lock":           h.GatewayLockFile(),
		"gateway_pid":            h.PIDFile(),
	}
}

// orEmpty returns s, or an empty slice for nil, so that JSON shows [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// emitJSON writes the envelope as one indented JSON document.
func emitJSON(o *options, env envelope) error {
	data, err := encodeEnvelope(env)
	if err != nil {
		return err
	}
	o.state.emitted = true
	_, err = o.stdout.Write(data)
	return err
}

// encodeEnvelope encodes the envelope indented, without HTML escaping.
func encodeEnvelope(env envelope) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// formatInstant renders Unix microseconds as RFC 3339 UTC with microseconds.
func formatInstant(micros int64) string {
	return time.UnixMicro(micros).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

// streamMarker stands in for data while the envelope is encoded, so that a long list can
// be streamed into its place instead of being held in memory.
const streamMarker = `"\u0000stream\u0000"`

// envelopeAround encodes env, whose data holds streamMarker, and returns the text before and
// after the marker.
func envelopeAround(env envelope) (prefix, suffix []byte, err error) {
	head, err := encodeEnvelope(env)
	if err != nil {
		return nil, nil, err
	}
	prefix, suffix, ok := bytes.Cut(head, []byte(streamMarker))
	if !ok {
		return nil, nil, fmt.Errorf("encode JSON: stream marker lost")
	}
	return prefix, suffix, nil
}

// emitJSONStream writes the envelope with data = {"<field>": [items…], …rest}, calling each
// to produce the items one at a time (each item is encoded as soon as it is given), then rest
// (nil: none) for the members that follow the list, such as a total counted while streaming.
func emitJSONStream(o *options, env envelope, field string, each func(emit func(any) error) error, rest func() (map[string]any, error)) error {
	env.Data = json.RawMessage(streamMarker)
	prefix, suffix, err := envelopeAround(env)
	if err != nil {
		return err
	}
	o.state.emitted = true
	w := bufio.NewWriterSize(o.stdout, 64<<10)
	fmt.Fprintf(w, "%s{\n    %q: [", prefix, field)
	first := true
	var buf bytes.Buffer
	itemEnc := json.NewEncoder(&buf)
	itemEnc.SetEscapeHTML(false)
	err = each(func(item any) error {
		sep := ",\n      "
		if first {
			sep, first = "\n      ", false
		}
		buf.Reset()
		if err := itemEnc.Encode(item); err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		w.WriteString(sep)
		_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	})
	if err != nil {
		return err
	}
	w.WriteString("\n    ]")
	if rest != nil {
		members, err := rest()
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(members))
		for k := range members {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			val, err := json.Marshal(members[k])
			if err != nil {
				return fmt.Errorf("encode JSON: %w", err)
			}
			fmt.Fprintf(w, ",\n    %q: %s", k, val)
		}
	}
	w.WriteString("\n  }")
	w.Write(suffix)
	return w.Flush()
}
