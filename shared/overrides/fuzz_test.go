package overrides

import (
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// FuzzParse feeds arbitrary documents to the parser (seeds in testdata/fuzz/FuzzParse):
// it must never panic, must reject only with errs.Invalid, and what it accepts
// must apply cleanly both to an empty catalog and to one holding every entry.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		data, err := Parse(doc)
		if err != nil {
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("Parse error of kind %v: %v", errs.KindOf(err), err)
			}
			if ValidateData(doc) == nil {
				t.Fatal("ValidateData accepts what Parse rejects")
			}
			return
		}
		present := make([]Resource, len(data.Resources))
		for i, o := range data.Resources {
			present[i] = Resource{Type: o.Type, Title: o.Title}
		}
		for _, catalog := range [][]Resource{nil, present} {
			result, err := Apply(catalog, data, nil)
			if err != nil {
				if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "dependency cycle") {
					t.Fatalf("Apply of parsed data failed: %v", err)
				}
				continue
			}
			r := result.Report
			if n := len(r.Updated) + len(r.Created) + len(r.Skipped); n != len(data.Resources) {
				t.Fatalf("report has %d entries for %d resources", n, len(data.Resources))
			}
			if len(result.Catalog) != len(catalog)+len(r.Created) {
				t.Fatalf("catalog grew by %d, report says %d created", len(result.Catalog)-len(catalog), len(r.Created))
			}
		}
	})
}
