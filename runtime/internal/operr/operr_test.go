package operr

import (
	"errors"
	"strings"
	"testing"
)

var errCause = errors.New("Redis unavailable at 10.0.0.7:6379")

// An operation's error says "hotkey: ", the operation, its key and field
// when it has them, and its cause, once however often it is wrapped.
func TestErrorSaysWhatFailedOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"an operation on a key", Of("get", "user:1", errCause), `hotkey: get "user:1": Redis unavailable at 10.0.0.7:6379`},
		{"an operation on several keys", Of("mget", "", errCause), `hotkey: mget: Redis unavailable at 10.0.0.7:6379`},
		{"an operation on a field", OfField("hget", "devtok:42", "phone", errCause), `hotkey: hget "devtok:42" "phone": Redis unavailable at 10.0.0.7:6379`},
		{"wrapped again", Of("get", "user:2", Of("get", "user:1", errCause)), `hotkey: get "user:1": Redis unavailable at 10.0.0.7:6379`},
		{"a field's, wrapped again", OfField("hget", "k", "f", OfField("hgetall", "k", "", errCause)), `hotkey: hgetall "k": Redis unavailable at 10.0.0.7:6379`},
		{"the user's error kept whole", &Error{Op: "load", Key: "user:1", Err: Of("get", "x", errCause)}, `hotkey: load "user:1": hotkey: get "x": Redis unavailable at 10.0.0.7:6379`},
		{"a key longer than Shown, cut", Of("get", strings.Repeat("k", Shown+1), errCause), `hotkey: get "` + strings.Repeat("k", Shown) + `…(257 bytes)": Redis unavailable at 10.0.0.7:6379`},
		{"a key cut on a character's start", Of("get", strings.Repeat("k", Shown-1)+"é!", errCause), `hotkey: get "` + strings.Repeat("k", Shown-1) + `…(258 bytes)": Redis unavailable at 10.0.0.7:6379`},
		{"a field longer than Shown, cut", OfField("hget", "k", strings.Repeat("f", 1<<20), errCause), `hotkey: hget "k" "` + strings.Repeat("f", Shown) + `…(1048576 bytes)": Redis unavailable at 10.0.0.7:6379`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
			if !errors.Is(tc.err, errCause) {
				t.Fatal("the cause is not matched through it")
			}
		})
	}
}

func TestCause(t *testing.T) {
	if got := Cause(Of("get", "user:1", errCause)); got != errCause {
		t.Fatalf("Cause of an operation's error = %v", got)
	}
	if got := Cause(errCause); got != errCause {
		t.Fatalf("Cause of another error = %v", got)
	}
}
