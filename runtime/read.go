package runtime

import "context"

// fetch reads and decodes key from Redis, and returns the size of the
// bytes read and the expiry of a copy of them when the caller may keep one
// (keep: the key is hot; see layout.Layout.Read). While the key's node is
// unreachable it fails at once, unless patient.
func (c *Cache[K, V]) fetch(ctx context.Context, key string, patient, keep bool) (v *V, size int, exp int64, err error) {
	var b []byte
	err = c.ask(ctx, key, patient, func(ctx context.Context) (err error) {
		b, exp, err = c.store.Read(ctx, c.sender, key, keep)
		return err
	})
	if err != nil {
		return nil, 0, 0, opErr(c.store.ReadOp(), key, err)
	}
	v, err = c.decodeValue(key, b)
	return v, len(b), exp, err
}

// ask sends read, a read of key, to the key's node through its breaker
// (reads.Reader.Ask). Every read of one key goes through it: Get's, the
// flight's, HGet's.
func (c *Cache[K, V]) ask(ctx context.Context, key string, patient bool, read func(context.Context) error) error {
	return c.reader.Ask(ctx, key, patient, read)
}
