package sessionsjson

import (
	"strings"
	"testing"
)

func TestSessionKeyProblem(t *testing.T) {
	tests := []struct {
		key            string
		strict, slashy string
	}{
		{"agent:main:telegram:dm:1", "", ""},
		{"agent:main:slack:group:C1/T2", `contains "/"`, ""},
		{`agent:main:x\y`, `contains "\"`, ""},
		{"agent:main:../x", `contains ".."`, `contains ".."`},
		{"/abs", "starts with a path separator", "starts with a path separator"},
		{`\abs`, "starts with a path separator", "starts with a path separator"},
		{"C:thing", "starts with a drive letter", "starts with a drive letter"},
		{"1:thing", "", ""},
		{"", "", ""}, // `if not value: return False` (4d4ba0831, 83f14b2f2)
		{"é:agent", "starts with a drive letter", "starts with a drive letter"}, // str.isalpha is Unicode
		{"ß:x", "starts with a drive letter", "starts with a drive letter"},
		{"1:thing:é", "", ""},
		{"٣:x", "", ""}, // a digit (Nd), not a letter
	}
	for _, tt := range tests {
		if got := SessionKeyProblem(tt.key, false); got != tt.strict {
			t.Errorf("SessionKeyProblem(%q, strict) = %q, want %q", tt.key, got, tt.strict)
		}
		if got := SessionKeyProblem(tt.key, true); got != tt.slashy {
			t.Errorf("SessionKeyProblem(%q, interior) = %q, want %q", tt.key, got, tt.slashy)
		}
		if got := SessionIDProblem(tt.key); got != tt.strict {
			t.Errorf("SessionIDProblem(%q) = %q, want %q", tt.key, got, tt.strict)
		}
	}
}

func FuzzSessionKeyProblem(f *testing.F) {
	for _, s := range []string{"agent:main:telegram:dm:1", "a/b", "../x", "C:x", `\x`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		strict, loose := SessionKeyProblem(key, false), SessionKeyProblem(key, true)
		if loose != "" && strict == "" {
			t.Fatalf("%q: interior rule rejects (%s) what the strict rule accepts", key, loose)
		}
		unsafe := strings.Contains(key, "..") || strings.HasPrefix(key, "/") || strings.HasPrefix(key, `\`)
		if unsafe && loose == "" {
			t.Fatalf("%q accepted", key)
		}
	})
}

func TestGenerations(t *testing.T) {
	tests := []struct {
		schema int
		gen    Generation
		writes bool
		flag   string
	}{
		{0, GenUnknown, true, "expiry_finalized"},
		{6, GenR0418, true, "memory_flushed"},
		{11, GenR0506, true, "expiry_finalized"},
		{13, GenR0525, true, "expiry_finalized"},
		{17, GenR0703, true, "expiry_finalized"},
		{21, GenR0715, true, "expiry_finalized"},
		{22, GenV22V25, false, "expiry_finalized"},
		{26, GenR0817, true, "expiry_finalized"},
		{27, GenNewer, false, "expiry_finalized"},
	}
	for _, tt := range tests {
		g := GenerationForSchema(tt.schema)
		r := RulesFor(g)
		if g != tt.gen || r.WritesAllowed != tt.writes || r.FinalizedFlag != tt.flag || r.Generation != g {
			t.Errorf("schema %d: %s %+v", tt.schema, g, r)
		}
	}
	if !RulesFor(GenR0418).CrashRecoverySetsSuspended || RulesFor(GenR0506).CrashRecoverySetsSuspended {
		t.Error("crash recovery flag")
	}
	readmes := map[string]Generation{"": GenR0525, READMEr0703: GenR0703, READMEr0715: GenR0715, "other": GenNewer}
	for text, want := range readmes {
		if got := GenerationFromREADME(text); got != want {
			t.Errorf("GenerationFromREADME(%.20q) = %s, want %s", text, got, want)
		}
	}
}
