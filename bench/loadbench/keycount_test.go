package main

import (
	"context"
	"io"
	"maps"
	"net"
	"slices"
	"testing"
)

func TestRespScannerCountsReadKeys(t *testing.T) {
	stream := "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n" +
		"*2\r\n$3\r\nget\r\n$6\r\nitem:1\r\n" +
		"*3\r\n$3\r\nSET\r\n$6\r\nitem:2\r\n$9\r\nx\r\n*2\r\n$3\r\n" + // a value that looks like RESP
		"*3\r\n$4\r\nMGET\r\n$6\r\nitem:3\r\n$6\r\nitem:1\r\n" +
		"*2\r\n$3\r\nGET\r\n$6\r\nitem:4\r\n"
	want := map[string]uint64{"item:1": 2, "item:3": 1, "item:4": 1}
	// Fed whole, and split at every possible point.
	for split := range len(stream) + 1 {
		var s respScanner
		got := map[string]uint64{}
		count := func(k []byte) { got[string(k)]++ }
		s.feed([]byte(stream[:split]), count)
		s.feed([]byte(stream[split:]), count)
		if !maps.Equal(got, want) {
			t.Fatalf("split at %d: counted %v, want %v", split, got, want)
		}
	}
	// Fed a byte at a time.
	var s respScanner
	got := map[string]uint64{}
	for i := range len(stream) {
		s.feed([]byte{stream[i]}, func(k []byte) { got[string(k)]++ })
	}
	if !maps.Equal(got, want) {
		t.Fatalf("byte by byte: counted %v, want %v", got, want)
	}
}

// TestKeyCounterSeesTheWire counts through the hook's connection wrapper,
// as every system's client does.
func TestKeyCounterSeesTheWire(t *testing.T) {
	kc := NewKeyCounter(10)
	client, server := net.Pipe()
	defer server.Close()
	go io.Copy(io.Discard, server)
	dial := kc.Hook().DialHook(func(context.Context, string, string) (net.Conn, error) { return client, nil })
	conn, err := dial(context.Background(), "tcp", "redis")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, cmd := range []string{
		"*2\r\n$3\r\nGET\r\n$6\r\nitem:3\r\n",
		"*3\r\n$4\r\nMGET\r\n$6\r\nitem:3\r\n$6\r\nitem:9\r\n",
		"*2\r\n$3\r\nGET\r\n$7\r\nitem:10\r\n", // beyond the counted keys
		"*2\r\n$3\r\nGET\r\n$6\r\nuser:3\r\n",  // not an item
		"*3\r\n$3\r\nSET\r\n$6\r\nitem:4\r\n$1\r\nx\r\n",
	} {
		if _, err := conn.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
	}
	got := kc.Take()
	if want := []uint64{0, 0, 0, 2, 0, 0, 0, 0, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	if again := kc.Take(); slices.Max(again) != 0 {
		t.Errorf("Take did not start again from zero: %v", again)
	}
}
