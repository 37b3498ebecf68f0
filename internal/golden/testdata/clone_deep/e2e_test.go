package profile

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go.

import (
	"reflect"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/golden/testdata/clone_deep/geo"
)

var updates = make(chan int)

// sample returns the same fully populated Profile on every call.
func sample() *Profile {
	best := 7
	p := &Profile{
		ID:     1,
		Name:   "Ada",
		Tags:   []string{"a", "b"},
		Scores: map[string]int{"go": 10},
		Best:   &best,
		Home:   Address{Street: "Main", Lines: []string{"1"}, Geo: &Point{1, 2}},
		Work:   &Address{Street: "Work", Lines: []string{"2"}, Geo: &Point{3, 4}},
		Past:   []Address{{Street: "Old", Lines: []string{"3"}, Geo: &Point{5, 6}}},
		ByName: map[string]*Address{"w": {Street: "W", Lines: []string{"4"}, Geo: &Point{7, 8}}, "nil": nil},
		Grid:   [2][]int{{1, 2}, nil},
		Matrix: [][]float64{{1.5}, {}},
		Groups: map[string][]string{"g": {"x"}},
		At:     Point{9, 9},
		Since:  time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		Every:  time.Minute,
		Zone:   time.UTC,
		Office: geo.NewPlace("HQ", "main"),
		Labels: Labels{"l"},
		Pair:   Pair[string, []int]{Key: "k", Value: []int{1}},
		Extra:  "shared, but a string cannot change",
		// OnChange stays nil: reflect.DeepEqual never finds funcs equal.
		Updates:  updates,
		Embedded: Embedded{Notes: []string{"n"}},
		secret:   []byte("s"),
	}
	p.Prefs.Flags = []bool{true}
	p.Prefs.Level = 3
	return p
}

func TestCloneIsDeep(t *testing.T) {
	orig := sample()
	c := cloneProfile(orig)
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone differs from the original:\n%+v\n%+v", c, orig)
	}

	c.Tags[0] = "x"
	c.Scores["go"], c.Scores["new"] = 0, 1
	*c.Best = 0
	c.Home.Lines[0], c.Home.Geo.Lat = "x", 0
	c.Work.Street, c.Work.Lines[0], c.Work.Geo.Lng = "x", "x", 0
	c.Past[0].Lines[0], c.Past[0].Geo.Lat = "x", 0
	c.ByName["w"].Lines[0], c.ByName["w"].Geo.Lat = "x", 0
	c.ByName["new"] = nil
	c.Grid[0][0] = 0
	c.Matrix[0][0] = 0
	c.Groups["g"][0] = "x"
	c.Prefs.Flags[0] = false
	c.Office.Tags[0] = "x"
	c.Labels[0] = "x"
	c.Pair.Value[0] = 0
	c.Notes[0] = "x"
	c.secret[0] = 'x'

	if !reflect.DeepEqual(orig, sample()) {
		t.Fatalf("changing the clone changed the original:\n%+v", orig)
	}
	if c.Zone != orig.Zone {
		t.Error("the *time.Location was copied; it is shared by design")
	}
}

func TestCloneKeepsNilAndEmpty(t *testing.T) {
	if cloneProfile(nil) != nil {
		t.Fatal("cloneProfile(nil) != nil")
	}
	if c := cloneProfile(&Profile{}); !reflect.DeepEqual(c, &Profile{}) {
		t.Fatalf("the zero Profile cloned to %+v", c)
	}
	empty := &Profile{Tags: []string{}, Scores: map[string]int{}, Past: []Address{}, ByName: map[string]*Address{}}
	c := cloneProfile(empty)
	if c.Tags == nil || c.Scores == nil || c.Past == nil || c.ByName == nil {
		t.Fatalf("empty slices and maps must stay non-nil: %+v", c)
	}
	if !reflect.DeepEqual(c, empty) {
		t.Fatalf("clone of empty parts differs: %+v", c)
	}
}
