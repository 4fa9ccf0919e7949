package statedb

import "testing"

// TestBuiltinTokenizer: a tokenizer no SQLite has built in is replaced for the replay; the
// built-in ones (and statements without one) are left as they are.
func TestBuiltinTokenizer(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE VIRTUAL TABLE f USING fts5(content, tokenize='cjk_unicode61')":              "CREATE VIRTUAL TABLE f USING fts5(content, tokenize='unicode61')",
		"CREATE VIRTUAL TABLE f USING fts5(content, tokenize = \"cjk_unicode61 x 1\")":      "CREATE VIRTUAL TABLE f USING fts5(content, tokenize='unicode61')",
		"CREATE VIRTUAL TABLE f USING fts5(content, tokenize='trigram')":                    "CREATE VIRTUAL TABLE f USING fts5(content, tokenize='trigram')",
		"CREATE VIRTUAL TABLE f USING fts5(content, tokenize='porter unicode61', prefix=2)": "CREATE VIRTUAL TABLE f USING fts5(content, tokenize='porter unicode61', prefix=2)",
		"CREATE TABLE t (a)": "CREATE TABLE t (a)",
	} {
		if got := builtinTokenizer(in); got != want {
			t.Errorf("builtinTokenizer(%q) = %q, want %q", in, got, want)
		}
	}
}
