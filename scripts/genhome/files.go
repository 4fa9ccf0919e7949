package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// sessionsJSON renders sessions.json like the generation's runtime:
// json.dump(data, f, indent=2), _README first where the runtime adds one,
// no trailing newline.
func sessionsJSON(p *plan) string {
	top := make([]field, 0, len(p.entries)+1)
	if p.cfg.Gen.Readme != "" {
		top = append(top, field{"_README", p.cfg.Gen.Readme})
	}
	for _, e := range p.entries {
		top = append(top, field{e.Chat.Key, e.toFields(p.cfg.Gen)})
	}
	var b strings.Builder
	b.Grow(len(p.entries) * 1200)
	writeIndented(&b, top, 0)
	return b.String()
}

// writeFile writes body to path with the given mode through a buffer.
func writeFile(path, body string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bw.WriteString(body); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// buildFiles adds the live transcripts of a few routing entries and a
// leftover temp file of an interrupted sessions.json save.
func (p *plan) buildFiles() {
	for i, e := range p.entries {
		if i%97 == 0 {
			p.files = append(p.files, sessionFile{e.SessionID + ".jsonl", "{\"role\": \"user\", \"content\": \"hi\"}\n"})
		}
	}
	p.files = append(p.files, sessionFile{".sessions_" + p.hexID(8) + ".tmp", "{"})
}

// writeHomeFiles writes sessions/sessions.json, the transcript files, a
// leftover temp file and .restart_failure_counts.
func writeHomeFiles(p *plan, out string) error {
	sdir := filepath.Join(out, "sessions")
	if err := writeFile(filepath.Join(sdir, "sessions.json"), sessionsJSON(p), 0o600); err != nil {
		return err
	}
	for _, f := range p.files {
		if err := writeFile(filepath.Join(sdir, f.Name), f.Body, 0o644); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(out, ".restart_failure_counts"), compactJSON(p.counts), 0o644)
}
