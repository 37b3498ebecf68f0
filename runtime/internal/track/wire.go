package track

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// wire is one RESP3 connection, as far as a keyed session needs it: it
// writes commands and reads replies and pushes, each bounded, so that no
// byte from the server makes it allocate more than maxBulk, maxElems or
// maxDepth allow. Only the session's goroutine uses it.
type wire struct {
	cn net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// The bounds of what a reply may hold. A session reads PING answers,
// EXISTS counts, invalidations of the keys it asked for, and the
// handshake's few kilobytes: anything larger is not from a Redis it
// talks to, and ends the session.
const (
	maxBulk  = 1 << 20
	maxElems = 1 << 16
	maxDepth = 4
)

// errWire is a reply no Redis sends.
var errWire = errors.New("malformed reply")

func newWire(cn net.Conn) *wire {
	return &wire{cn: cn, r: bufio.NewReader(cn), w: bufio.NewWriter(cn)}
}

// reply is one RESP3 reply or push. Aggregates keep their elements, a
// map its keys and values in turn; null is set for RESP3's null and
// RESP2's null bulk and array.
type reply struct {
	kind  byte
	str   string // simple string, error, bulk, verbatim text (without its format), double, big number
	n     int64  // integer, boolean (1 or 0)
	elems []reply
	null  bool
}

// err returns the reply as an error, when it is one.
func (r reply) err() error {
	if r.kind == '-' || r.kind == '!' {
		return redisError(r.str)
	}
	return nil
}

// redisError is an error reply from Redis.
type redisError string

func (e redisError) Error() string { return string(e) }

// RedisError marks it as an answer, not a failure of the connection
// (go-redis's redis.Error).
func (redisError) RedisError() {}

// send writes each command, then flushes them, all within d.
func (w *wire) send(d time.Duration, cmds ...[]string) error {
	w.cn.SetWriteDeadline(time.Now().Add(d))
	for _, args := range cmds {
		w.w.WriteString("*")
		w.w.WriteString(strconv.Itoa(len(args)))
		w.w.WriteString("\r\n")
		for _, a := range args {
			w.w.WriteString("$")
			w.w.WriteString(strconv.Itoa(len(a)))
			w.w.WriteString("\r\n")
			w.w.WriteString(a)
			w.w.WriteString("\r\n")
		}
	}
	return w.w.Flush()
}

// next waits up to wait for the start of the next reply, then reads it
// whole within rest. A wait that ends before a byte came is a timeout
// (a net.Error) and leaves the connection usable; one that ends inside a
// reply is a failure of the connection.
func (w *wire) next(wait, rest time.Duration) (reply, error) {
	if w.r.Buffered() == 0 {
		w.cn.SetReadDeadline(time.Now().Add(wait))
		if _, err := w.r.Peek(1); err != nil {
			return reply{}, err
		}
	}
	w.cn.SetReadDeadline(time.Now().Add(rest))
	r, err := w.read(0)
	if err != nil {
		return reply{}, cutShort{err}
	}
	return r, nil
}

// cutShort is a reply the connection failed inside of: what was read of
// it is lost, and the connection with it. It is no timeout to wait out.
type cutShort struct{ err error }

func (e cutShort) Error() string { return "a reply cut short: " + e.err.Error() }

func (w *wire) read(depth int) (reply, error) {
	line, err := w.line()
	if err != nil {
		return reply{}, err
	}
	r := reply{kind: line[0]}
	body := string(line[1:])
	switch r.kind {
	case '+', '-', ',', '(':
		r.str = body
	case ':':
		if r.n, err = strconv.ParseInt(body, 10, 64); err != nil {
			return reply{}, fmt.Errorf("%w: integer %q", errWire, body)
		}
	case '#':
		switch body {
		case "t":
			r.n = 1
		case "f":
		default:
			return reply{}, fmt.Errorf("%w: boolean %q", errWire, body)
		}
	case '_':
		r.null = true
	case '$', '=', '!':
		n, err := length(body, maxBulk)
		if err != nil || n < 0 {
			r.null = true
			return r, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(w.r, buf); err != nil {
			return reply{}, err
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return reply{}, fmt.Errorf("%w: bulk of %d bytes not ended by CRLF", errWire, n)
		}
		r.str = string(buf[:n])
		if r.kind == '=' { // a verbatim string starts with its format: "txt:"
			if len(r.str) < 4 || r.str[3] != ':' {
				return reply{}, fmt.Errorf("%w: verbatim string without a format", errWire)
			}
			r.str = r.str[4:]
		}
	case '*', '>', '~', '%', '|':
		n, err := length(body, maxElems)
		if err != nil || n < 0 {
			r.null = true
			return r, err
		}
		if depth == maxDepth {
			return reply{}, fmt.Errorf("%w: nested deeper than %d", errWire, maxDepth)
		}
		if r.kind == '%' || r.kind == '|' {
			n *= 2 // keys and values
		}
		r.elems = make([]reply, 0, min(n, 64))
		for range n {
			e, err := w.read(depth + 1)
			if err != nil {
				return reply{}, err
			}
			r.elems = append(r.elems, e)
		}
		if r.kind == '|' { // attributes come before the reply they describe
			return w.read(depth)
		}
	default:
		return reply{}, fmt.Errorf("%w: type %q", errWire, r.kind)
	}
	return r, nil
}

// line returns the next line, without its CRLF, never empty.
func (w *wire) line() ([]byte, error) {
	line, err := w.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("%w: a line longer than %d bytes", errWire, w.r.Size())
	case err != nil:
		return nil, err
	case len(line) < 3 || line[len(line)-2] != '\r':
		return nil, fmt.Errorf("%w: line %q", errWire, line)
	}
	return line[:len(line)-2], nil
}

// length parses an aggregate's or a bulk's length: -1 (null) or 0 to max.
func length(s string, max int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 || n > max {
		return 0, fmt.Errorf("%w: length %q (at most %d)", errWire, s, max)
	}
	return n, nil
}
