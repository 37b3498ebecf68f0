package main

import (
	"maps"
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
