package detect

import (
	"reflect"
	"testing"
)

func TestSelect(t *testing.T) {
	th := Thresholds{Hot: 3000, Warm: 500, TopN: 2}
	qps := func(k string, q float64) KeyRate[string] { return KeyRate[string]{Key: k, Name: k, QPS: q} }
	tests := []struct {
		name string
		view []KeyRate[string]
		hot  []string
		pass Pass
		want Decision[string]
	}{
		{
			name: "a key at hot_qps is promoted",
			view: []KeyRate[string]{qps("a", 3000)},
			pass: PromotePass,
			want: Decision[string]{Promote: []string{"a"}},
		},
		{
			name: "a key just below hot_qps is not",
			view: []KeyRate[string]{qps("a", 2999)},
			pass: PromotePass,
		},
		{
			name: "a burst counts before the window catches up",
			view: []KeyRate[string]{{Key: "a", QPS: 300, Burst: 30000}},
			pass: PromotePass,
			want: Decision[string]{Promote: []string{"a"}},
		},
		{
			name: "only the top_n hottest are promoted, hottest first",
			view: []KeyRate[string]{qps("a", 4000), qps("b", 9000), qps("c", 5000)},
			pass: PromotePass,
			want: Decision[string]{Promote: []string{"b", "c"}},
		},
		{
			name: "a hot key between warm and hot stays (hysteresis)",
			view: []KeyRate[string]{qps("a", 600)},
			hot:  []string{"a"},
			pass: PromotePass | DemotePass,
		},
		{
			name: "a hot key below warm is demoted by the demotion pass",
			view: []KeyRate[string]{qps("a", 499)},
			hot:  []string{"a"},
			pass: DemotePass,
			want: Decision[string]{Demote: []string{"a"}},
		},
		{
			name: "but not by a promotion pass",
			view: []KeyRate[string]{qps("a", 499)},
			hot:  []string{"a"},
			pass: PromotePass,
		},
		{
			name: "a hot key the recorder forgot scores zero and is demoted",
			hot:  []string{"gone"},
			pass: DemotePass,
			want: Decision[string]{Demote: []string{"gone"}},
		},
		{
			name: "a cold key is never promoted by a demotion pass",
			view: []KeyRate[string]{qps("a", 9000)},
			pass: DemotePass,
		},
		{
			name: "with the hot set full, a hotter candidate displaces the weakest",
			view: []KeyRate[string]{qps("a", 4000), qps("b", 5000), qps("c", 4500)},
			hot:  []string{"a", "b"},
			pass: PromotePass,
			want: Decision[string]{Promote: []string{"c"}, Demote: []string{"a"}},
		},
		{
			name: "a candidate within 10% of the weakest does not displace it",
			view: []KeyRate[string]{qps("a", 4000), qps("b", 5000), qps("c", 4400)},
			hot:  []string{"a", "b"},
			pass: PromotePass,
		},
		{
			name: "a cooled key's slot goes to a candidate in one combined pass",
			view: []KeyRate[string]{qps("a", 100), qps("b", 5000), qps("c", 3500)},
			hot:  []string{"a", "b"},
			pass: PromotePass | DemotePass,
			want: Decision[string]{Promote: []string{"c"}, Demote: []string{"a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hot := map[string]string{}
			for _, k := range tt.hot {
				hot[k] = k
			}
			got := Select(tt.view, hot, th, tt.pass)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Select() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	th := Thresholds{Hot: 3000, Warm: 500}
	for _, c := range []struct {
		rate float64
		want Temperature
	}{{0, Cold}, {499, Cold}, {500, Warm}, {2999, Warm}, {3000, Hot}} {
		if got := th.Classify(c.rate); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.rate, got, c.want)
		}
	}
}
