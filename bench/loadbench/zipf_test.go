package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestZipfSkew(t *testing.T) {
	const n, draws = 1000, 2_000_000
	z := NewZipf(n, 0.99)
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, n)
	for range draws {
		k := z.Next(r)
		if k < 0 || k >= n {
			t.Fatalf("Next returned %d, outside [0, %d)", k, n)
		}
		counts[k]++
	}
	// Ranks 0 and 1 are drawn with their exact probabilities.
	for _, i := range []int64{0, 1} {
		got := float64(counts[i]) / draws
		if want := z.Prob(i); math.Abs(got-want) > 0.02*want {
			t.Errorf("rank %d drawn %.4f of the time, want %.4f", i, got, want)
		}
	}
	// The rest follow Gray's approximation: the head's share is close to
	// the ideal one, and popularity falls with rank as 1/rank^0.99.
	var got, want float64
	for i := range int64(10) {
		got += float64(counts[i]) / draws
		want += z.Prob(i)
	}
	if math.Abs(got-want) > 0.05*want {
		t.Errorf("the top 10 ranks drew %.3f of the reads, want about %.3f", got, want)
	}
	if ratio := float64(counts[0]) / float64(counts[99]); ratio < 60 || ratio > 160 {
		t.Errorf("rank 0 drawn %.0f times as often as rank 99, want about 95", ratio)
	}
	if counts[n-1] == 0 {
		t.Error("the last rank was never drawn")
	}
}

func TestZipfDeterministic(t *testing.T) {
	z := NewZipf(100_000, 0.99)
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for i := range 1000 {
		if x, y := z.Next(a), z.Next(b); x != y {
			t.Fatalf("draw %d: %d and %d from the same seed", i, x, y)
		}
	}
}
