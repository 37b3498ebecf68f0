package group

import (
	"context"
	"errors"
	"testing"
)

// Unattended returns what f returns, or ErrAbandoned as soon as ctx ends,
// leaving f to go on alone.
func TestUnattended(t *testing.T) {
	errUser := errors.New("the loader failed")
	for _, tc := range []struct {
		name string
		f    func() (int, error)
		want int
		err  error
	}{
		{"a value", func() (int, error) { return 7, nil }, 7, nil},
		{"an error", func() (int, error) { return 0, errUser }, 0, errUser},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, err := Unattended(context.Background(), tc.f); v != tc.want || err != tc.err {
				t.Fatalf("Unattended = %d, %v; want %d, %v", v, err, tc.want, tc.err)
			}
		})
	}
	t.Run("a call that ignores its context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		release, returned := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(returned)
			if v, err := Unattended(ctx, func() (int, error) { <-release; return 7, nil }); v != 0 || err != ErrAbandoned {
				t.Errorf("Unattended = %d, %v; want 0, ErrAbandoned", v, err)
			}
		}()
		cancel()
		<-returned // before f returns
		close(release)
	})
}
