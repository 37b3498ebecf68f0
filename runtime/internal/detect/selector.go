package detect

import (
	"cmp"
	"slices"
)

// displaceMargin is how much more than a hot key a candidate must score to
// take its place: hot keys' rates are sampled (see RecordSampled), and a
// swap costs a Redis read and a cold start.
const displaceMargin = 1.1

// Thresholds are the selector's parameters.
type Thresholds struct {
	Hot  float64 // promote at or above
	Warm float64 // demote below
	TopN int     // hot keys at most
}

// Temperature classifies a key's rate against Thresholds.
type Temperature int

// Temperatures, coldest first.
const (
	Cold Temperature = iota // below Warm
	Warm                    // between Warm and Hot: a hot key stays hot, a cold one stays cold
	Hot                     // at or above Hot
)

func (t Temperature) String() string {
	switch t {
	case Hot:
		return "hot"
	case Warm:
		return "warm"
	default:
		return "cold"
	}
}

// Classify returns the temperature of a key scoring rate.
func (t Thresholds) Classify(rate float64) Temperature {
	switch {
	case rate >= t.Hot:
		return Hot
	case rate >= t.Warm:
		return Warm
	default:
		return Cold
	}
}

// Pass says which decisions a selection may take.
type Pass int

// Passes. Promotion runs often and demotion rarely, so a key that dips for
// a moment is not dropped.
const (
	PromotePass Pass = 1 << iota
	DemotePass
)

// Decision is what the selector asks the hot set to change.
type Decision[K comparable] struct {
	Promote []K // ordered by score, highest first
	Demote  []K // ordered by name
}

// Select decides which keys become hot and which stop being hot. It is
// pure: view holds the rates it may consider (keys missing from it score 0),
// hot maps the current hot keys to their names. Ties are broken by name, so
// the outcome never depends on map order.
//
// A demotion pass demotes hot keys scoring below Warm. A promotion pass
// promotes keys scoring at least Hot that rank within the top TopN among
// the candidates and the remaining hot keys; when the hot set is full, a
// candidate displaces the weakest hot key only by outscoring it by more
// than displaceMargin, so two keys of about the same rate at the edge of
// the top TopN do not swap places at every tick.
func Select[K comparable](view []KeyRate[K], hot map[K]string, t Thresholds, pass Pass) Decision[K] {
	score := make(map[K]float64, len(view))
	for _, kr := range view {
		score[kr.Key] = kr.Score()
	}
	type ranked struct {
		key       K
		name      string
		score     float64
		incumbent bool
	}
	var d Decision[K]
	var demote, pool []ranked
	for k, name := range hot {
		s := score[k]
		if pass&DemotePass != 0 && s < t.Warm {
			demote = append(demote, ranked{key: k, name: name})
			continue
		}
		pool = append(pool, ranked{k, name, s * displaceMargin, true})
	}
	if pass&PromotePass != 0 {
		for _, kr := range view {
			if _, isHot := hot[kr.Key]; !isHot && kr.Score() >= t.Hot {
				pool = append(pool, ranked{kr.Key, kr.Name, kr.Score(), false})
			}
		}
		slices.SortFunc(pool, func(a, b ranked) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			if a.incumbent != b.incumbent {
				if a.incumbent {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.name, b.name)
		})
		for i, p := range pool {
			switch {
			case i < t.TopN && !p.incumbent:
				d.Promote = append(d.Promote, p.key)
			case i >= t.TopN && p.incumbent:
				demote = append(demote, p)
			}
		}
	}
	slices.SortFunc(demote, func(a, b ranked) int { return cmp.Compare(a.name, b.name) })
	for _, r := range demote {
		d.Demote = append(d.Demote, r.key)
	}
	return d
}
