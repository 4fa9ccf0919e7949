package commands

import (
	"runtime/debug"
	"testing"
)

// TestFormatVersion: the version names the module version and the VCS revision, or says
// that the build recorded none.
func TestFormatVersion(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "063c13d4d49b7a4b2f4c9c3f0c3d6fb2e2d1a0b1"}}
	tests := []struct {
		module   string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.0", rev, "v1.2.0 (revision 063c13d4d49b)"},
		{"v0.0.0-20261125153145-063c13d4d49b+dirty", append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}),
			"v0.0.0-20261125153145-063c13d4d49b+dirty (revision 063c13d4d49b, modified)"},
		{"(devel)", nil, "(devel) (no VCS revision recorded)"},
		{"", nil, "(devel) (no VCS revision recorded)"},
	}
	for _, tt := range tests {
		if got := formatVersion(tt.module, tt.settings); got != tt.want {
			t.Errorf("formatVersion(%q) = %q, want %q", tt.module, got, tt.want)
		}
	}
}
