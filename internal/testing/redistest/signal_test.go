package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestFreezeHoldsAnswersUntilThaw(t *testing.T) {
	srv := Start(t)
	// go-redis waits out its read timeout whatever the context says.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	err := rdb.Ping(context.Background()).Err()
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	if err == nil {
		t.Fatal("a frozen server answered")
	}
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("after Thaw: %v", err)
	}
}

func TestTerminateAndRelaunch(t *testing.T) {
	srv := Start(t)
	if err := srv.Terminate(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Relaunch(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}
