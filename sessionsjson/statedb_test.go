package sessionsjson

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestGatewayRoutingEntryJSON checks EncodeEntryJSON against the rows the r0715 runtime wrote.
func TestGatewayRoutingEntryJSON(t *testing.T) {
	var f fixture
	for _, x := range fixtures(t) {
		if x.gen == GenR0715 {
			f = x
		}
	}
	dbPath := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(dbPath, readFixture(t, f, "state.db"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT session_key, entry_json FROM gateway_routing ORDER BY session_key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	doc, _ := decodeFixture(t, f)
	n := 0
	for rows.Next() {
		var key, entryJSON string
		if err := rows.Scan(&key, &entryJSON); err != nil {
			t.Fatal(err)
		}
		e, err := DecodeEntry(key, []byte(entryJSON), RulesFor(GenR0715))
		if err != nil || e.Skip != "" {
			t.Fatalf("%s: %v %q", key, err, e.Skip)
		}
		if got := EncodeEntryJSON(e, true); string(got) != entryJSON {
			t.Errorf("%s: EncodeEntryJSON differs:\n%s\n%s", key, got, entryJSON)
		}
		if mirror := doc.Entry(key); mirror == nil || !bytes.Equal(mirror.Raw(), e.Raw()) {
			t.Errorf("%s: mirror differs from the row", key)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 18 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

// syntheticSessions builds a runtime-shaped sessions.json with n entries.
func syntheticSessions(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"_README\": ")
	b.Write(appendPyString(nil, READMEr0715, true))
	pad := strings.Repeat("x", 150)
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("agent:main:telegram:dm:%d", 100000+i)
		fmt.Fprintf(&b, ",\n  %q: {\n    \"session_key\": %q,\n    \"session_id\": \"20260705_031119_%08x\",\n", key, key, i)
		b.WriteString("    \"created_at\": \"2026-07-05T03:11:19.205917\",\n    \"updated_at\": \"2026-07-16T09:04:37.811354\",\n")
		fmt.Fprintf(&b, "    \"display_name\": \"User %d %s\",\n    \"platform\": \"telegram\",\n    \"chat_type\": \"dm\",\n", i, pad)
		for _, f := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens", "last_prompt_tokens"} {
			fmt.Fprintf(&b, "    %q: 0,\n", f)
		}
		b.WriteString("    \"estimated_cost_usd\": 0.0,\n    \"cost_status\": \"unknown\",\n    \"expiry_finalized\": false,\n    \"suspended\": false,\n")
		b.WriteString("    \"resume_pending\": false,\n    \"resume_reason\": null,\n    \"last_resume_marked_at\": null,\n    \"is_fresh_reset\": false,\n")
		b.WriteString("    \"was_auto_reset\": false,\n    \"auto_reset_reason\": null,\n    \"reset_had_activity\": false,\n")
		fmt.Fprintf(&b, "    \"origin\": {\n      \"platform\": \"telegram\",\n      \"chat_id\": \"%d\",\n      \"chat_name\": \"User\",\n", 100000+i)
		b.WriteString("      \"chat_type\": \"dm\",\n      \"user_id\": \"1\",\n      \"user_name\": \"u\",\n      \"thread_id\": null,\n      \"chat_topic\": null\n    }\n  }")
	}
	b.WriteString("\n}")
	return b.Bytes()
}

func TestSyntheticRoundTrip(t *testing.T) {
	data := syntheticSessions(50)
	d, err := Decode(data, RulesFor(GenR0715))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Entries() {
		if e.Skip != "" {
			t.Fatalf("%s: %s", e.Key, e.Skip)
		}
		_ = d.Replace(e.Key, e)
	}
	if !bytes.Equal(d.Encode(true), data) {
		t.Fatal(firstDiff(d.Encode(true), data))
	}
}

// BenchmarkDecodeEncode decodes a 20,000-entry file (about 20 MB), edits one entry and encodes.
func BenchmarkDecodeEncode(b *testing.B) {
	data := syntheticSessions(20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Decode(data, RulesFor(GenR0715))
		if err != nil {
			b.Fatal(err)
		}
		e := d.Entries()[10000]
		edited, _ := e.Set("suspended", true)
		_ = d.Replace(e.Key, edited)
		if out := d.Encode(true); len(out) != len(data)-1 {
			b.Fatalf("len %d vs %d", len(out), len(data))
		}
	}
}

// BenchmarkDecode decodes the same 20,000-entry file without editing or encoding.
func BenchmarkDecode(b *testing.B) {
	data := syntheticSessions(20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data, RulesFor(GenR0715)); err != nil {
			b.Fatal(err)
		}
	}
}
