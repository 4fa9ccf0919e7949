package repair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// RemoveEntries removes the entries of the keys where the runtime reads routing (entries rm):
// sessions.json, or the gateway_routing rows and their sessions.json mirror copies (a legacy
// entry from sessions.json only). An entry the runtime skips may be removed too: the command
// names it.
func RemoveEntries(keys []string) Planner {
	return func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		if err := checkKeys(h, keys); err != nil {
			return RoutingPlan{}, err
		}
		return RoutingPlan{Removals: keys}, nil
	}
}

// Assignment is one FIELD=VALUE of entries set, the value as typed.
type Assignment struct {
	Field string
	Text  string
}

// ErrNotSettable refuses a session_key other than the entry's key (the runtime indexes by
// the key; setting the field to it mends entry.key-mismatch).
var ErrNotSettable = errors.New("entries set: session_key can only be set to the entry's own key; nothing written")

// SetFields sets fields of one entry to typed values (entries set): only fields the
// generation's runtime reads, each with a value of the type its to_dict writes. An edit that
// would make the runtime skip an entry it loads is refused; one that mends a skipped entry is
// what the command is for.
func SetFields(key string, sets []Assignment) Planner {
	return func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		if err := checkKeys(h, []string{key}); err != nil {
			return RoutingPlan{}, err
		}
		edit := EntryEdit{Key: key}
		for _, s := range sets {
			if s.Field == "session_key" && s.Text != key {
				return RoutingPlan{}, failure.Mark(failure.Usage, ErrNotSettable)
			}
			raw, err := h.Rules.ParseFieldValue(s.Field, s.Text)
			if err != nil {
				return RoutingPlan{}, failure.Mark(failure.Usage, fmt.Errorf("entries set: %w; nothing written", err))
			}
			edit.Fields = append(edit.Fields, FieldEdit{Field: s.Field, Value: raw})
		}
		if err := refuseNewSkip(h.Entry(key), edit); err != nil {
			return RoutingPlan{}, err
		}
		return RoutingPlan{Edits: []EntryEdit{edit}}, nil
	}
}

// refuseNewSkip refuses an edit after which the runtime would skip an entry it loads now.
func refuseNewSkip(e *sessionsjson.Entry, edit EntryEdit) error {
	after := e
	for _, f := range edit.Fields {
		next, err := after.Set(f.Field, f.Value)
		if err != nil {
			return failure.Mark(failure.Usage, err)
		}
		after = next
	}
	if e.Skip == "" && after.Skip != "" {
		return failure.Mark(failure.Usage, fmt.Errorf("entries set: the runtime would skip entry %q after this change (%s); nothing written", e.Key, after.Skip))
	}
	return nil
}

// Relocation is what relocate moves: the gateway_routing rows of scope From to this home's
// scope To.
type Relocation struct {
	From string `json:"from"`
	To   string `json:"to"`
	Rows int    `json:"rows"`
}

// ErrNoRelocation refuses a relocate that cannot say which rows are this home's.
var ErrNoRelocation = errors.New("relocate")

// Relocate plans, and when applying writes, the move of the gateway_routing rows of another
// scope to this home's (a home moved or copied to a new path: the runtime reads only the rows
// whose scope is its resolved sessions directory). from picks the scope among several. The
// rows move in one transaction, each checked against its journaled image; sessions.json (the
// mirror, unscoped) is left alone. Refused while a gateway runs, as every routing write.
func Relocate(ctx context.Context, r *Run, from string) (Outcome, *Relocation, error) {
	h := r.H
	rel, err := planRelocation(h, from)
	if err != nil || rel == nil {
		return Outcome{}, rel, err
	}
	changes, err := h.DB.RelocationChanges(ctx, rel.From, rel.To)
	if err != nil {
		return Outcome{}, rel, err
	}
	res := Outcome{Changes: relocationChanges(changes, rel)}
	if !r.Apply || len(changes) == 0 {
		return res, rel, nil
	}
	if err := r.routingWritable(ctx, true); err != nil {
		return res, rel, err
	}
	if fresh, err := r.lock(ctx); err != nil {
		return res, rel, err
	} else if fresh {
		return Relocate(ctx, r, from)
	}
	j := r.newJournal()
	j.Scope, j.Rows = rel.To, changes
	path, err := r.writeJournal(j)
	if err != nil {
		return res, rel, failure.Mark(failure.Write, err)
	}
	if _, err := restoreRows(ctx, r, changes); err != nil {
		_ = os.Remove(path) // rolled back: the journal would describe a change that never happened
		return res, rel, err
	}
	res.Applied, res.Journals = true, []string{path}
	return res, rel, nil
}

// planRelocation decides which scope moves: the only other one, or from. A home whose own
// scope has rows already is refused: the move would merge two routing indexes.
func planRelocation(h *home.Home, from string) (*Relocation, error) {
	if h.Storage != home.StorageDB {
		return nil, failure.Mark(failure.Data, fmt.Errorf("%w: this home's routing index is sessions.json (no gateway_routing table): there is no scope to relocate", ErrNoRelocation))
	}
	scopes := make([]string, 0, len(h.Routing.Foreign))
	for s := range h.Routing.Foreign {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	switch {
	case from != "" && h.Routing.Foreign[from] == 0:
		return nil, failure.Mark(failure.Data, fmt.Errorf("%w: gateway_routing has no rows of scope %q (other scopes: %s)", ErrNoRelocation, from, orNone(scopes)))
	case len(scopes) == 0:
		return nil, nil
	case h.Routing.Source == home.SourceGatewayRouting:
		return nil, failure.Mark(failure.Data, fmt.Errorf("%w: gateway_routing already holds rows of this home's scope %s: moving the rows of %s there would merge two routing indexes; nothing written", ErrNoRelocation, h.Routing.Scope, strings.Join(scopes, ", ")))
	case from == "" && len(scopes) > 1:
		return nil, failure.Mark(failure.Usage, fmt.Errorf("%w: gateway_routing has rows of several other scopes (%s): name one with --from SCOPE", ErrNoRelocation, strings.Join(scopes, ", ")))
	case from == "":
		from = scopes[0]
	}
	return &Relocation{From: from, To: h.Routing.Scope, Rows: h.Routing.Foreign[from]}, nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// relocationChanges lists one change per row moved.
func relocationChanges(changes []statedb.RowChange, rel *Relocation) []Change {
	out := make([]Change, 0, len(changes)/2)
	for _, c := range changes {
		if c.Before != nil {
			out = append(out, Change{Store: home.StoreGatewayRouting, Target: c.Key["session_key"].Text, Op: "relocate", Before: rel.From, After: rel.To})
		}
	}
	return out
}
