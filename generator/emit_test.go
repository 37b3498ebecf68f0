package generator

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		width int
		want  []string
	}{{
		name: "short text stays on one line",
		text: "Stats returns a snapshot.", width: 40,
		want: []string{"Stats returns a snapshot."},
	}, {
		name: "lines break between words",
		text: "one two three four", width: 9,
		want: []string{"one two", "three", "four"},
	}, {
		name: "a word longer than the width gets its own line",
		text: "a verylongword b", width: 5,
		want: []string{"a", "verylongword", "b"},
	}, {
		name: "a newline starts a new line",
		text: "first\nsecond", width: 40,
		want: []string{"first", "second"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrap(tt.text, tt.width); !slices.Equal(got, tt.want) {
				t.Errorf("wrap = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOptionValuesReadAsAPersonWouldWriteThem(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{90 * time.Minute, "90 * time.Minute"},
		{time.Minute, "time.Minute"},
		{time.Duration(0), "0"},
		{2500.5, "2500.5"},
		{0.1, "0.1"},
		{10240, "10240"},
		{true, "true"},
		{false, "false"},
		{"user", `"user"`},
		{modeConst("loader"), "runtime.DegradeLoader"},
		{modeConst("off"), "runtime.DegradeOff"},
		{modeConst("later"), `"later"`}, // annotations rejects it; it still compiles
		{modeConst("pubsub"), "runtime.InvalidatePubSub"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%#v", optionValue(tt.v)); got != tt.want {
			t.Errorf("optionValue(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}
