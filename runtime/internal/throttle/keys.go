package throttle

import (
	"sync"
	"time"
)

// KeyEvery limits the warnings about one key.
const KeyEvery = time.Minute

// MaxKeys bounds the memory of which keys were warned about recently.
const MaxKeys = 1024

// Keys says which keys to warn about, each at most once per KeyEvery, in
// bounded memory: the warnings about big values, which every read and
// write of a big value would otherwise log.
type Keys struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Due reports whether to warn about key at now, and if so records it.
// Past MaxKeys keys, those warned about more than KeyEvery ago are
// forgotten, and if none was, all are.
func (k *Keys) Due(key string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	last, seen := k.last[key]
	warn := !seen || now.Sub(last) >= KeyEvery
	if warn {
		if len(k.last) >= MaxKeys {
			for name, t := range k.last {
				if now.Sub(t) >= KeyEvery {
					delete(k.last, name)
				}
			}
			if len(k.last) >= MaxKeys {
				clear(k.last)
			}
		}
		if k.last == nil {
			k.last = map[string]time.Time{}
		}
		k.last[key] = now
	}
	return warn
}
