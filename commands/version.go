package commands

import (
	"runtime/debug"
	"strings"
)

// version is the module version and VCS revision this binary was built from, as Go records
// them ("(devel)" and no revision for a plain `go run` or a test).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return v
	}
	return strings.Join([]string{v, rev[:min(len(rev), 12)] + dirty}, " ")
}
