package metrics

import (
	"fmt"
	"testing"
)

type fixedCache struct{ hits, misses uint64 }

func (c fixedCache) Stats() (uint64, uint64) { return c.hits, c.misses }

func TestRegistryCollectsEveryFamily(t *testing.T) {
	r := NewRegistry()
	calls := r.Counter("calls_total", "Calls.", []string{"kind"}, "get")
	if again := r.Counter("calls_total", "Calls.", []string{"kind"}, "get"); again != calls {
		t.Error("the same label values gave another counter")
	}
	calls.Add(3)
	r.Counter("calls_total", "Calls.", []string{"kind"}, "put").Inc()
	r.Func("waiting", "Waiting.", KindGauge, nil, func() float64 { return 2 })
	r.Cache("docs", fixedCache{5, 1})
	var got []string
	r.Each(func(f Family, s Series, v float64) { got = append(got, fmt.Sprint(f.Name, s.Values, v)) })
	want := fmt.Sprint([]string{"calls_total[get] 3", "calls_total[put] 1", "waiting[] 2",
		"tuningbox_cache_hits_total[docs] 5", "tuningbox_cache_misses_total[docs] 1"})
	if fmt.Sprint(got) != want {
		t.Errorf("Each gave %v, want %v", got, want)
	}
}

func TestNilRegistryCountsAndKeepsNothing(t *testing.T) {
	var r *Registry
	c := r.Counter("calls_total", "Calls.", []string{"kind"}, "get")
	c.Inc()
	r.Cache("docs", fixedCache{})
	if c.Value() != 1 {
		t.Errorf("counter = %d, want 1", c.Value())
	}
	r.Each(func(Family, Series, float64) { t.Error("a nil registry has no series") })
}

func TestLabelsAreChecked(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a counter with the wrong number of label values did not panic")
		}
	}()
	NewRegistry().Counter("calls_total", "Calls.", []string{"kind"})
}
