package review

import (
	"fmt"
	"strings"
)

// checkKeyFieldsMutable: a primary row key holding fields beyond the
// entity key moves the entity when one of them changes; only a locator
// lets the writer follow it.
func checkKeyFieldsMutable(r *reviewer) {
	for _, e := range r.plan.Entities {
		t := r.plan.Primary(e.Name)
		if t == nil || !r.plan.NeedsLocator(e.Name) || r.plan.Locator(e.Name) != nil {
			continue
		}
		var extra []string
		for _, f := range t.Key.Fields() {
			if !contains(e.Key, f) {
				extra = append(extra, f)
			}
		}
		r.add("key-fields-mutable", at{table: t.Name, line: firstLine(t.Lines["rowkey"], t.Line)}, fmt.Sprintf(
			"primary table %s keys %s by %s beside its key %s, and no locator table follows it: a change of %s leaves the old row and its copies behind",
			t.Name, e.Name, strings.Join(extra, ", "), strings.Join(e.Key, ", "), strings.Join(extra, " or ")))
	}
}
