package check

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/holders"
	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// deletedHolders reports each process that holds a deleted generation of state.db, its -wal
// or -shm, or sessions.json open (Linux; elsewhere there is nothing to scan): the file was
// replaced or removed while the process kept it, so what it writes there goes nowhere.
func deletedHolders(h *home.Home) []Finding {
	s, err := holders.Find(h.Opts.Home)
	if err != nil {
		return nil
	}
	var out []Finding
	for _, hd := range s.Deleted() {
		out = append(out, Finding{DBDeletedHolder, Error, fmt.Sprintf("pid %d", hd.PID), fmt.Sprintf(
			"process %d (%s) holds a deleted %s open: the file was replaced or removed while it ran, and what it writes there is lost; stop or restart it (sessionctl holders)",
			hd.PID, hd.Command, hd.File)})
	}
	return out
}

// holdersStatus is what status says of the processes holding the home's files: the scan, or
// nil where the platform has none.
func holdersStatus(h *home.Home) *holders.Scan {
	s, err := holders.Find(h.Opts.Home)
	if err != nil {
		return nil
	}
	if s.Holders == nil {
		s.Holders = []holders.Holder{}
	}
	return &s
}

// HoldersText words the holders for status.
func (d StatusData) HoldersText() string {
	switch {
	case d.Holders == nil:
		return "unknown (only Linux lists the files a process holds open)"
	case len(d.Holders.Holders) == 0:
		return "none"
	}
	return holders.Describe(d.Holders.Holders)
}
