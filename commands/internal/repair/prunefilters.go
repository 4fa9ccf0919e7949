package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// filterOrigin says where each filter set came from, for the refusal of a filter the home's
// generation lacks.
var filterOrigin = map[sessionsjson.PruneFilterSet]string{
	sessionsjson.PruneFiltersV21: "_prune_filter_where arrived with 040a5e30d, r0715",
	sessionsjson.PruneFiltersV26: "it arrived with a228b8150, r0817",
}

// resolvedFilters are the filters of a run: resolved, and as its summary shows them.
type resolvedFilters struct {
	args   []statedb.FilterArg
	values map[string]any // name -> value bound (nil for archived=any); nil without filters
	text   string         // "; filters a=1 b=x" for the summary line, or ""
}

// resolveFilters resolves each filter given (a time given as an age at the run's clock),
// refusing (data) a filter the home's generation's _prune_filter_where does not have: its
// runtime cannot select by it.
func resolveFilters(h *home.Home, given []statedb.FilterArg) (resolvedFilters, error) {
	var out resolvedFilters
	if len(given) == 0 {
		return out, nil
	}
	set, parts := h.Rules.Maintenance.PruneFilters, make([]string, 0, len(given))
	out.values = map[string]any{}
	for _, a := range given {
		if a.Filter.Since > set {
			return resolvedFilters{}, failure.Mark(failure.Data, fmt.Errorf("%s --%s: generation %s (schema v%d) has no %s filter (%s): nothing changed",
				h.Opts.Command, a.Filter.Flag(), h.Gen, h.Schema.Version, a.Filter.Name, filterOrigin[a.Filter.Since]))
		}
		a = a.Resolved(h.Opts.Clock.Unix)
		out.args, out.values[a.Filter.Name] = append(out.args, a), a.Value
		parts = append(parts, a.Filter.Name+"="+filterValueText(a))
	}
	out.text = "; filters " + strings.Join(parts, " ")
	return out, nil
}

// filterValueText writes a filter's bound value: an instant as RFC 3339, archived=any as any.
func filterValueText(a statedb.FilterArg) string {
	switch v := a.Value.(type) {
	case nil:
		return "any"
	case float64:
		if a.Filter.Kind == statedb.FilterTime {
			return instant(v)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return strconv.Quote(v)
	}
	return fmt.Sprint(a.Value)
}
