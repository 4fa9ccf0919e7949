package sessionsjson

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestCountsFixtures(t *testing.T) {
	for _, f := range fixtures(t) {
		data := readFixture(t, f, ".restart_failure_counts")
		c, err := DecodeCounts(data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Encode(), data) {
			t.Errorf("%s: Encode = %s", f.name, c.Encode())
		}
		if n, ok := c.Int("agent:main:telegram:group:-1007032299350:762131314"); !ok || n != 5 || c.Len() != 4 {
			t.Errorf("%s: Int = %d %v, Len = %d", f.name, n, ok, c.Len())
		}
	}
}

func TestCounts(t *testing.T) {
	c, err := DecodeCounts([]byte(`{"a": 1, "b": "3", "c": 3.5, "d": true, "a": 4, "é": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	ints := []struct {
		key string
		n   int64
		ok  bool
	}{{"a", 4, true}, {"b", 0, false}, {"c", 0, false}, {"d", 0, false}, {"zz", 0, false}}
	for _, tt := range ints {
		if n, ok := c.Int(tt.key); n != tt.n || ok != tt.ok {
			t.Errorf("Int(%q) = %d %v", tt.key, n, ok)
		}
	}
	if got, want := string(c.Without("b", "c").Encode()), `{"a": 4, "d": true, "\u00e9": 2}`; got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	if got := string(c.Without(c.Keys...).Encode()); got != "{}" {
		t.Errorf("empty Encode = %s", got)
	}
	for _, bad := range []string{``, `[]`, `3`, `{"a": }`, "\xEF\xBB\xBF{}"} {
		if _, err := DecodeCounts([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeCounts(%q) = %v", bad, err)
		}
	}
}

func FuzzDecodeCounts(f *testing.F) {
	f.Add([]byte(`{"agent:main:telegram:dm:1": 4, "b": 1}`))
	f.Add([]byte(`{"a": "3", "a": 2.5}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCounts(data)
		if err != nil {
			return
		}
		again, err := DecodeCounts(c.Encode())
		if err != nil || !bytes.Equal(again.Encode(), c.Encode()) || again.Len() != c.Len() {
			t.Fatalf("re-decode of %s: %v", c.Encode(), err)
		}
	})
}

// countComparisons is the runtime's stuck-loop comparison, `v >= self._STUCK_LOOP_THRESHOLD`
// with the threshold 3, on what json.loads returns for each raw value: upstream
// NousResearch/hermes-agent gateway/run.py GatewayRunner._suspend_stuck_loop_sessions, commit
// 6c8930643704c1590d528ca18520d18defe7f4aa (2026-04-14, #7536), unchanged through 9a75ff049
// (2026-08-22). Each row was checked with CPython 3.11 (the runtime requires >= 3.11).
var countComparisons = []struct {
	raw  string
	want CountComparison
}{
	{`3`, CountReaches},
	{`2`, CountBelow},
	{`-5`, CountBelow},
	{`-0`, CountBelow},
	{`1000000000000000000000000000000`, CountReaches},
	{`3.0`, CountReaches},
	{`3.5`, CountReaches},
	{`2.5`, CountBelow},
	{`2.9999999999999999`, CountReaches}, // the float 3.0
	{`2.999999999999999`, CountBelow},
	{`3e0`, CountReaches},
	{`1E0`, CountBelow},
	{`1e23`, CountReaches},
	{`1e999`, CountReaches}, // inf
	{`-1e999`, CountBelow},  // -inf
	{`1e-999`, CountBelow},  // 0.0
	{`Infinity`, CountReaches},
	{`-Infinity`, CountBelow},
	{`NaN`, CountBelow},
	{`true`, CountBelow}, // True == 1
	{`false`, CountBelow},
	{`"3"`, CountRaises},
	{`null`, CountRaises},
	{`[3]`, CountRaises},
	{`{}`, CountRaises},
}

func TestCompareCount(t *testing.T) {
	for _, tt := range countComparisons {
		if got := CompareCount([]byte(tt.raw), StuckLoopThreshold); got != tt.want {
			t.Errorf("CompareCount(%s, 3) = %d, want %d", tt.raw, got, tt.want)
		}
	}
	for _, tt := range []struct {
		raw       string
		threshold int64
		want      CountComparison
	}{
		{`true`, 1, CountReaches},
		{`false`, 0, CountReaches},
		{`9007199254740993`, 9007199254740993, CountReaches},
		{`9007199254740992.0`, 9007199254740993, CountBelow}, // exact, not through float64
	} {
		if got := CompareCount([]byte(tt.raw), tt.threshold); got != tt.want {
			t.Errorf("CompareCount(%s, %d) = %d, want %d", tt.raw, tt.threshold, got, tt.want)
		}
	}
}

// TestCompareCountWithPython runs the table through CPython when python3 is installed.
func TestCompareCountWithPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script := `import json, sys
for line in sys.stdin.read().splitlines():
    try:
        print("reaches" if json.loads(line) >= 3 else "below")
    except TypeError:
        print("raises")
`
	var in strings.Builder
	for _, tt := range countComparisons {
		in.WriteString(tt.raw + "\n")
	}
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]CountComparison{"below": CountBelow, "reaches": CountReaches, "raises": CountRaises}
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if names[line] != countComparisons[i].want {
			t.Errorf("python: %s >= 3 is %s; the table says %d", countComparisons[i].raw, line, countComparisons[i].want)
		}
	}
}

// TestCountsComparisonRaises: one value the comparison raises on, anywhere in the file,
// means the runtime's start suspends nothing; a later duplicate key replaces it (dict).
func TestCountsComparisonRaises(t *testing.T) {
	for _, tt := range []struct {
		file    string
		key     string
		raises  bool
		reaches []string
	}{
		{`{"a": 3, "b": 3.5, "c": true, "d": NaN, "e": 1e999}`, "", false, []string{"a", "b", "e"}},
		{`{"a": 3, "b": "3"}`, "b", true, []string{"a"}},
		{`{"a": null, "b": 4}`, "a", true, []string{"b"}},
		{`{"a": "3", "a": 3}`, "", false, []string{"a"}},
		{`{}`, "", false, nil},
	} {
		c, err := DecodeCounts([]byte(tt.file))
		if err != nil {
			t.Fatal(err)
		}
		key, raises := c.ComparisonRaises(StuckLoopThreshold)
		if key != tt.key || raises != tt.raises {
			t.Errorf("%s: ComparisonRaises = %q %v", tt.file, key, raises)
		}
		var reaches []string
		for _, k := range c.Keys {
			if c.ReachesThreshold(k, StuckLoopThreshold) {
				reaches = append(reaches, k)
			}
		}
		if !slices.Equal(reaches, tt.reaches) {
			t.Errorf("%s: reaching %v, want %v", tt.file, reaches, tt.reaches)
		}
	}
	if _, err := DecodeCounts([]byte(`{"a": ` + strings.Repeat("9", 4301) + `}`)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("an integer Python's json refuses: %v", err)
	}
}
