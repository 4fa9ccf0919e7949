package commands

import "testing"

// TestShowProgress: a progress bar only on a terminal stderr, never under -q or --json.
func TestShowProgress(t *testing.T) {
	tests := []struct {
		terminal, quiet, json, want bool
	}{
		{terminal: true, want: true},
		{terminal: true, quiet: true},
		{terminal: true, json: true},
		{terminal: true, quiet: true, json: true},
		{},
		{quiet: true},
		{json: true},
	}
	for _, tt := range tests {
		if got := showProgress(tt.terminal, tt.quiet, tt.json); got != tt.want {
			t.Errorf("showProgress(terminal=%v, quiet=%v, json=%v) = %v, want %v", tt.terminal, tt.quiet, tt.json, got, tt.want)
		}
	}
}
