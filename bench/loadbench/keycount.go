package main

import (
	"bytes"
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// KeyCounter counts, per key, the reads that actually reach Redis: the
// keys of every GET and MGET a client writes to its connections.
//
// It watches the wire rather than go-redis's ProcessHook because with
// go-redis's client-side cache the process hook runs for every GET, the
// cache hits included (the cache sits inside process); only the bytes
// written to the socket tell what Redis saw. It is installed through a
// redis.Hook's DialHook (Hook), or around a connection a client dialled
// itself (Wrap), so every system's clients are counted alike.
//
// Counts live in one array indexed by item ID, not in maps: a map of
// every key read would put megabytes of pointers on the heap and make the
// garbage collector, and so every system measured, slower.
type KeyCounter struct {
	counts []atomic.Uint32
}

// NewKeyCounter counts the reads of keys item:0 to item:n-1.
func NewKeyCounter(n int64) *KeyCounter { return &KeyCounter{counts: make([]atomic.Uint32, n)} }

// Take returns the reads per item ID counted so far and starts again from
// zero.
func (k *KeyCounter) Take() []uint64 {
	out := make([]uint64, len(k.counts))
	for i := range k.counts {
		out[i] = uint64(k.counts[i].Swap(0))
	}
	return out
}

func (k *KeyCounter) count(key []byte) {
	if id, ok := parseItemKey(key); ok && id < int64(len(k.counts)) {
		k.counts[id].Add(1)
	}
}

// parseItemKey is itemID for the bytes on the wire, without allocating.
func parseItemKey(key []byte) (int64, bool) {
	digits, ok := bytes.CutPrefix(key, []byte("item:"))
	if !ok || len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var id int64
	for _, d := range digits {
		if d < '0' || d > '9' {
			return 0, false
		}
		id = id*10 + int64(d-'0')
	}
	return id, true
}

// Hook returns the hook to add to a client with AddHook.
func (k *KeyCounter) Hook() redis.Hook { return keyCountHook{k} }

type keyCountHook struct{ k *KeyCounter }

func (h keyCountHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return h.k.Wrap(conn), nil
	}
}

// Wrap returns conn counting the reads written to it, for clients that
// dial through a function of their own rather than go-redis's hooks.
func (k *KeyCounter) Wrap(conn net.Conn) net.Conn { return &countingConn{Conn: conn, count: k.count} }

func (keyCountHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (keyCountHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// countingConn parses the commands written to it. Reads pass through
// untouched, and SyscallConn exposes the socket, so go-redis's checks for
// pending data (which the client-side cache relies on for invalidations)
// work exactly as on an unwrapped connection.
type countingConn struct {
	net.Conn
	count func(key []byte)

	mu   sync.Mutex // go-redis writes from one goroutine at a time; uncontended
	scan respScanner
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.scan.feed(p, c.count)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *countingConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// NetConn returns the wrapped connection, as crypto/tls.Conn does.
func (c *countingConn) NetConn() net.Conn { return c.Conn }

// respScanner follows the RESP requests a client writes, which are arrays
// of bulk strings ("*2\r\n$3\r\nGET\r\n$6\r\nitem:7\r\n"), across Write
// boundaries, and reports the key arguments of GET and MGET.
type respScanner struct {
	line  []byte // a header line read so far
	args  int    // arguments left in the current command
	arg   int    // index of the argument being read
	need  int    // bytes of the current argument left, its CRLF included
	size  int    // length of the current argument
	buf   []byte // the current argument, when it is worth keeping
	isGet bool   // the command is GET or MGET
}

const maxKeyLen = 128

func (s *respScanner) feed(p []byte, count func(key []byte)) {
	for len(p) > 0 {
		if s.need > 0 {
			n := min(s.need, len(p))
			if body := min(n, s.need-2); body > 0 && (s.arg == 0 || s.isGet) && s.size <= maxKeyLen {
				s.buf = append(s.buf, p[:body]...) // the argument without its CRLF
			}
			s.need -= n
			p = p[n:]
			if s.need == 0 {
				s.endArg(count)
			}
			continue
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.line = append(s.line, p...)
			return
		}
		s.line = append(s.line, p[:i+1]...)
		p = p[i+1:]
		s.header(bytes.TrimRight(s.line, "\r\n"))
		s.line = s.line[:0]
	}
}

func (s *respScanner) header(h []byte) {
	if len(h) == 0 {
		return
	}
	n := 0
	for _, d := range h[1:] {
		if d < '0' || d > '9' {
			return
		}
		n = n*10 + int(d-'0')
	}
	switch h[0] {
	case '*':
		s.args, s.arg, s.isGet = n, 0, false
	case '$':
		s.size, s.need = n, n+2
		s.buf = s.buf[:0]
	}
}

func (s *respScanner) endArg(count func([]byte)) {
	switch {
	case s.arg == 0:
		s.isGet = bytes.EqualFold(s.buf, []byte("GET")) || bytes.EqualFold(s.buf, []byte("MGET"))
	case s.isGet && s.size <= maxKeyLen:
		count(s.buf)
	}
	s.arg++
	s.args--
}
