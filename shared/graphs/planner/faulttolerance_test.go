package planner

import (
	"encoding/json"
	"testing"
)

// The cases of Nailgun's calculate_fault_tolerance, as testdata/nailgun_plan_test.py has them.
func TestFaultTolerance(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{{"", 11}, {"0", 0}, {`"10%"`, 1}, {`"2%"`, 0}, {"-2", 8}, {"-20", 0}, {`"abc"`, 11}, {`" 3 "`, 3}, {`"-50%"`, 5}, {"true", 11}} {
		if got := faultTolerance(json.RawMessage(c.raw), 10); got != c.want {
			t.Errorf("fault_tolerance %s of 10 nodes = %d, want %d", c.raw, got, c.want)
		}
	}
}
