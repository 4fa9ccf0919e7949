package check

import "testing"

func TestWALResetBug(t *testing.T) {
	tests := []struct {
		version string
		bug     bool
	}{
		{"3.6.23", false}, {"3.7.0", true}, {"3.40.1", true}, {"3.44.6", false}, {"3.50.7", false},
		{"3.51.2", true}, {"3.51.3", false}, {"3.54.1", false}, {"4.0.0", false}, {"junk", false},
	}
	for _, tt := range tests {
		if got := walResetBug(tt.version); got != tt.bug {
			t.Errorf("walResetBug(%q) = %v, want %v", tt.version, got, tt.bug)
		}
	}
}
