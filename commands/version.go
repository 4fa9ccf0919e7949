package commands

import (
	"runtime/debug"
)

// version is the module version and VCS revision this binary was built from, as Go records
// them: `go build` in a git clone records the revision (and a pseudo-version naming it); a
// test binary, a build outside a clone or one with -buildvcs=false has none and says so.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return formatVersion(bi.Main.Version, bi.Settings)
}

// formatVersion is "<module version> (revision <12 hex digits>[, modified])".
func formatVersion(module string, settings []debug.BuildSetting) string {
	if module == "" {
		module = "(devel)"
	}
	var rev, dirty string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev == "" {
		return module + " (no VCS revision recorded)"
	}
	return module + " (revision " + rev[:min(len(rev), 12)] + dirty + ")"
}
