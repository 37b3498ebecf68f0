package runtime

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestDecodeMsgpackKey(t *testing.T) {
	long := strings.Repeat("k", 200)
	tests := []struct {
		name string
		key  any // what the map key is encoded from
		want string
	}{
		{"a field name comes back as written", "Name", "Name"},
		{"an empty key is empty", "", ""},
		{"a key longer than any field name is consumed and matches nothing", long, ""},
		{"a binary key reads like a string", []byte("ID"), "ID"},
		{"a nil key matches nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			enc := msgpack.NewEncoder(&b)
			enc.Encode(tt.key)
			enc.Encode("next") // the value after the key must stay readable
			dec := msgpack.NewDecoder(&b)
			var kb KeyBuf
			got, err := DecodeMsgpackKey(dec, &kb)
			if err != nil || string(got) != tt.want {
				t.Fatalf("DecodeMsgpackKey = %q, %v; want %q", got, err, tt.want)
			}
			if next, err := dec.DecodeString(); err != nil || next != "next" {
				t.Fatalf("the value after the key reads %q, %v", next, err)
			}
		})
	}
	dec := msgpack.NewDecoder(bytes.NewReader([]byte{0xd9, 200, 'k'})) // a str8 of 200 bytes, cut short
	var kb KeyBuf
	if _, err := DecodeMsgpackKey(dec, &kb); err == nil {
		t.Fatal("a truncated key decoded without error")
	}
}
