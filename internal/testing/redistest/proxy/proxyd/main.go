// Command proxyd runs the proxies of one test process (package proxy)
// in a process of its own, so that the network a test's clients see
// moves their bytes whatever the test does to its own goroutines. It
// reads one request a line on stdin and answers each on stdout, "ok"
// and its results, or "err" and why, and exits when stdin ends: when
// the process that started it does.
//
//	new UPSTREAM        ok ID ADDR
//	delay               ok NAME
//	set NAME NANOS      ok
//	follow ID NAME      ok
//	slow ID NANOS       ok
//	cut ID | heal ID    ok
//	move ID UPSTREAM    ok
//	close ID            ok
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest/proxy/toxic"
)

func main() {
	d := daemon{proxies: map[string]*toxic.Proxy{}, delays: map[string]*toxic.Delay{}}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		res, err := d.do(strings.Fields(in.Text()))
		if err != nil {
			fmt.Fprintf(out, "err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Fprintf(out, "ok %s\n", res)
		}
		out.Flush()
	}
	for _, p := range d.proxies {
		p.Close()
	}
}

// daemon holds the proxies and delays by the names it gave them; only
// main's goroutine uses it.
type daemon struct {
	proxies map[string]*toxic.Proxy
	delays  map[string]*toxic.Delay
	seq     int
}

var errUsage = errors.New("proxyd: unknown request or wrong arguments")

// do carries out one request.
func (d *daemon) do(f []string) (string, error) {
	if len(f) == 0 {
		return "", errUsage
	}
	verb, args := f[0], f[1:]
	switch {
	case verb == "new" && len(args) == 1:
		p, err := toxic.New(args[0])
		if err != nil {
			return "", err
		}
		d.seq++
		id := strconv.Itoa(d.seq)
		d.proxies[id] = p
		return id + " " + p.Addr, nil
	case verb == "delay" && len(args) == 0:
		d.seq++
		name := strconv.Itoa(d.seq)
		d.delays[name] = toxic.NewDelay()
		return name, nil
	case verb == "set" && len(args) == 2:
		dl, v, err := d.delay(args[0], args[1])
		if err == nil {
			dl.Set(v)
		}
		return "", err
	}
	if len(args) == 0 {
		return "", errUsage
	}
	p, ok := d.proxies[args[0]]
	if !ok {
		return "", fmt.Errorf("proxyd: no proxy %q", args[0])
	}
	switch {
	case verb == "follow" && len(args) == 2:
		dl, ok := d.delays[args[1]]
		if !ok {
			return "", fmt.Errorf("proxyd: no delay %q", args[1])
		}
		return "", p.Follow(dl)
	case verb == "slow" && len(args) == 2:
		v, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil {
			return "", err
		}
		return "", p.Slow(time.Duration(v))
	case verb == "cut" && len(args) == 1:
		return "", p.Cut()
	case verb == "heal" && len(args) == 1:
		p.Heal()
		return "", nil
	case verb == "move" && len(args) == 2:
		return "", p.Move(args[1])
	case verb == "close" && len(args) == 1:
		p.Close()
		delete(d.proxies, args[0])
		return "", nil
	}
	return "", errUsage
}

// delay returns the delay named name and the duration nanos spells.
func (d *daemon) delay(name, nanos string) (*toxic.Delay, time.Duration, error) {
	dl, ok := d.delays[name]
	if !ok {
		return nil, 0, fmt.Errorf("proxyd: no delay %q", name)
	}
	v, err := strconv.ParseInt(nanos, 10, 64)
	return dl, time.Duration(v), err
}
