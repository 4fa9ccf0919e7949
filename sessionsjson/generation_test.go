package sessionsjson

import (
	"testing"
)

// TestGenerationTable: each schema version maps to the generation that wrote it, at both
// edges of every row, and each generation's rules are the runtime's of that generation.
func TestGenerationTable(t *testing.T) {
	for _, tt := range []struct {
		schema int
		gen    Generation
	}{
		{0, GenUnknown}, {1, GenR0418}, {6, GenR0418}, {7, GenR0506}, {11, GenR0506}, {12, GenR0525},
		{16, GenR0525}, {17, GenR0703}, {18, GenR0703}, {19, GenR0715}, {21, GenR0715}, {22, GenV22V25}, {23, GenV22V25},
		{24, GenV22V25}, {25, GenV22V25}, {26, GenR0817}, {27, GenNewer}, {30, GenNewer},
	} {
		if got := GenerationForSchema(tt.schema); got != tt.gen {
			t.Errorf("GenerationForSchema(%d) = %s, want %s", tt.schema, got, tt.gen)
		}
	}
	type facts struct {
		crashSuspends, autoResume, pruneAtLoad, freshness, dbRepairs, writes bool
		safety                                                               PathSafety
		flag                                                                 string
		tip                                                                  TipRule
		r0817                                                                bool // turn markers, peer recovery, prompt GC, turn leases
	}
	for _, tt := range []struct {
		gen  Generation
		want facts
	}{
		{GenR0418, facts{crashSuspends: true, writes: true, flag: "memory_flushed", tip: TipNone}},
		{GenR0506, facts{dbRepairs: true, writes: true, flag: "expiry_finalized", tip: TipV11}},
		{GenR0525, facts{autoResume: true, dbRepairs: true, writes: true, flag: "expiry_finalized", tip: TipV11}},
		{GenR0703, facts{autoResume: true, pruneAtLoad: true, freshness: true, dbRepairs: true, writes: true, safety: PathSafetyStrict, flag: "expiry_finalized", tip: TipV17}},
		{GenR0715, facts{autoResume: true, pruneAtLoad: true, freshness: true, dbRepairs: true, writes: true, safety: PathSafetyInteriorSlash, flag: "expiry_finalized", tip: TipV17}},
		{GenV22V25, facts{autoResume: true, pruneAtLoad: true, freshness: true, dbRepairs: true, safety: PathSafetyInteriorSlash, flag: "expiry_finalized", tip: TipV17}},
		{GenR0817, facts{autoResume: true, pruneAtLoad: true, freshness: true, dbRepairs: true, writes: true, safety: PathSafetyInteriorSlash, flag: "expiry_finalized", tip: TipV24, r0817: true}},
		{GenNewer, facts{autoResume: true, pruneAtLoad: true, freshness: true, dbRepairs: true, safety: PathSafetyInteriorSlash, flag: "expiry_finalized", tip: TipV24, r0817: true}},
	} {
		r := RulesFor(tt.gen)
		got := facts{r.CrashRecoverySetsSuspended, r.AutoResume, r.PruneEndedAtLoad, r.FreshnessGate, r.DBRepairs, r.WritesAllowed, r.PathSafety, r.FinalizedFlag,
			r.Tip, r.TurnMarkers && r.PeerRecovery && r.PromptGC}
		if got != tt.want || r.Generation != tt.gen {
			t.Errorf("RulesFor(%s) = %+v, want %+v", tt.gen, got, tt.want)
		}
	}
	for v := 22; v <= 25; v++ {
		if r := RulesForSchema(v); r.WritesAllowed || !r.Intermediate || SchemaWritable(v) {
			t.Errorf("schema v%d: writes %v, intermediate %v", v, r.WritesAllowed, r.Intermediate)
		}
	}
	if RulesForSchema(24).Tip != TipV24 || !SchemaWritable(26) || SchemaWritable(27) || SchemaWritable(0) {
		t.Error("v24 tip rule or writable range")
	}
	for text, gen := range map[string]Generation{"": GenR0525, READMEr0703: GenR0703, READMEr0715: GenR0715, "Something else": GenNewer} {
		if got := GenerationFromREADME(text); got != gen {
			t.Errorf("GenerationFromREADME(%.20q) = %s, want %s", text, got, gen)
		}
	}
}

// TestStaleMarker: a resume marker exactly one freshness window old is fresh; one microsecond
// older is stale (the runtime compares age > W). Without last_resume_marked_at, updated_at
// counts.
func TestStaleMarker(t *testing.T) {
	const raw = `{"session_key": "k", "session_id": "s", "created_at": "2026-07-16T08:00:00", "updated_at": "2026-07-16T08:00:00", "resume_pending": true}`
	e, err := DecodeEntry("k", []byte(raw), RulesFor(GenR0715))
	if err != nil {
		t.Fatal(err)
	}
	marked := e.UpdatedAt.WallMicros()
	for _, tt := range []struct {
		age   int64
		stale bool
	}{{0, false}, {FreshnessWindowMicros - 1, false}, {FreshnessWindowMicros, false}, {FreshnessWindowMicros + 1, true}} {
		if got := e.StaleMarker(marked + tt.age); got != tt.stale {
			t.Errorf("age %d µs: stale = %v, want %v", tt.age, got, tt.stale)
		}
	}
	if FreshnessWindowMicros != 3600*1_000_000 || CrashWindowMicros != 120*1_000_000 || StuckLoopThreshold != 3 {
		t.Error("a runtime constant moved: freshness 1 h, crash window 120 s, stuck threshold 3")
	}
}

// TestNewerRulesAreUnverified: every generation of the table is verified (and writable); a
// newer generation borrows the newest rules unverified, and an entry whose platform those
// rules cannot resolve is not claimed skipped — its runtime may load it — while a known
// generation skips it as its runtime does.
func TestNewerRulesAreUnverified(t *testing.T) {
	for _, g := range generations {
		if !g.rules.Verified() {
			t.Errorf("generation %s is in the table but not verified", g.rules.Generation)
		}
	}
	newer := RulesFor(GenerationForSchema(NewestKnownSchema() + 1))
	if newer.Verified() || newer.WritesAllowed {
		t.Fatalf("rules of schema v%d: verified %v, writes %v; want neither", NewestKnownSchema()+1, newer.Verified(), newer.WritesAllowed)
	}
	const raw = `{"session_key": "k", "session_id": "s", "created_at": "2026-11-25T08:00:00", "updated_at": "2026-11-25T08:00:00", "platform": "zalo", "origin": {"platform": "zalo", "chat_id": "1"}}`
	known, err := DecodeEntry("k", []byte(raw), RulesFor(GenR0715))
	if err != nil {
		t.Fatal(err)
	}
	if known.Skip != SkipOriginPlatform {
		t.Errorf("r0715: skip %q, want %q", known.Skip, SkipOriginPlatform)
	}
	e, err := DecodeEntry("k", []byte(raw), newer)
	if err != nil {
		t.Fatal(err)
	}
	if e.Skip != "" || e.OriginPlatform != "zalo" || e.OriginChatID != "1" || e.PlatformKnown {
		t.Errorf("newer: skip %q, origin %q/%q, platform known %v; want loaded with origin zalo/1, platform unknown", e.Skip, e.OriginPlatform, e.OriginChatID, e.PlatformKnown)
	}
	// what no platform set decides is still read as the loader reads it
	noChat, err := DecodeEntry("k", []byte(`{"session_key": "k", "session_id": "s", "created_at": "2026-11-25", "updated_at": "2026-11-25", "origin": {"platform": "zalo"}}`), newer)
	if err != nil {
		t.Fatal(err)
	}
	if noChat.Skip != SkipOriginNoChatID {
		t.Errorf("newer, origin without chat_id: skip %q, want %q", noChat.Skip, SkipOriginNoChatID)
	}
}

// TestCodeSchema: each generation's SCHEMA_VERSION, as its fixture's runtime wrote it.
func TestCodeSchema(t *testing.T) {
	want := map[Generation]int{GenR0418: 6, GenR0506: 11, GenR0525: 13, GenR0703: 17, GenR0715: 21, GenR0817: 26}
	for g, v := range want {
		if got := CodeSchema(g); got != v {
			t.Errorf("CodeSchema(%s) = %d, want %d", g, got, v)
		}
	}
	if gens := Generations(); len(gens) != 7 || gens[0] != GenR0418 || gens[6] != GenR0817 {
		t.Errorf("Generations() = %v", gens)
	}
}

// TestStartRules: the routing table, the recovery lookup and the start-up maintenance of
// each generation (the rules upgrade-check runs a target's first start by).
func TestStartRules(t *testing.T) {
	type facts struct {
		routingTable bool
		recovery     RecoveryRule
		autoPrune    bool
		age          PruneAge
		vacuumWaits  bool
	}
	for _, tt := range []struct {
		gen  Generation
		want facts
	}{
		{GenR0418, facts{}},
		{GenR0506, facts{autoPrune: true}},
		{GenR0525, facts{autoPrune: true}},
		{GenR0703, facts{recovery: RecoveryV17, autoPrune: true}},
		{GenR0715, facts{routingTable: true, recovery: RecoveryV21, autoPrune: true}},
		{GenV22V25, facts{routingTable: true, recovery: RecoveryV21, autoPrune: true}},
		{GenR0817, facts{routingTable: true, recovery: RecoveryV26, autoPrune: true, age: PruneByInactivity, vacuumWaits: true}},
	} {
		r := RulesFor(tt.gen)
		m := r.Maintenance
		got := facts{r.GatewayRouting, r.Recovery, m.AutoPrune, m.Age, m.VacuumThrottle}
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.gen, got, tt.want)
		}
		if d := m.Defaults; d.AutoPrune || d.RetentionDays != 90 || d.MinIntervalHours != 24 || !d.VacuumAfterPrune || d.MinVacuumIntervalDays != 30 {
			t.Errorf("%s: sessions defaults %+v", tt.gen, d)
		}
		if (r.Recovery != RecoveryNone) != r.PruneEndedAtLoad || (r.Recovery == RecoveryV26) != r.PeerRecovery {
			t.Errorf("%s: recovery %d with load-time prune %v, peer recovery %v", tt.gen, r.Recovery, r.PruneEndedAtLoad, r.PeerRecovery)
		}
	}
}

// TestVacuumRules: each generation's vacuum() and the FTS tables its optimize_fts() merges
// (the hygiene fixtures' compact cases: r0418 has none, r0506/r0525 no FTS optimize).
func TestVacuumRules(t *testing.T) {
	for _, tt := range []struct {
		gen    Generation
		vacuum VacuumRule
		fts    int
	}{
		{GenR0418, VacuumNone, 0}, {GenR0506, VacuumCheckpointFirst, 0}, {GenR0525, VacuumCheckpointFirst, 0},
		{GenR0703, VacuumCheckpointFirst, 2}, {GenR0715, VacuumCheckpointFirst, 2}, {GenR0817, VacuumCheckpointAround, 3},
	} {
		m := RulesFor(tt.gen).Maintenance
		if m.Vacuum != tt.vacuum || len(m.OptimizeFTS.Tables()) != tt.fts {
			t.Errorf("%s: vacuum %d with %d FTS tables, want %d with %d", tt.gen, m.Vacuum, len(m.OptimizeFTS.Tables()), tt.vacuum, tt.fts)
		}
	}
}
