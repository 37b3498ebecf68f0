package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// -mode procs spreads a fleet over child processes, each this program
// run again with -child, holding its share of the instances as a
// localFleet. A child is driven by lines on its stdin and answers each
// with one line on its stdout:
//
//	(start)  ->  ready            once its instances have started
//	hold     ->  ok               once each holds its copies
//	held     ->  held <copies>    the copies its instances hold
//	(EOF)    ->  (exit)           it closes its instances and exits
//
// and "error <message>" instead of any answer, after which it exits 1.
// Its stderr is the parent's. The node is measured by the parent only.

// procFleet is a fleet of child processes.
type procFleet struct{ kids []*child }

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// newProcFleet starts n instances of sys in procs processes, as evenly
// as they divide.
func newProcFleet(ctx context.Context, sys systemInfo, t Target, n, procs int) (*procFleet, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("-mode procs runs this program again and cannot find it: %w; use -mode inproc", err)
	}
	procs = max(1, min(procs, n))
	f := &procFleet{}
	for i := range procs {
		count := n / procs
		if i < n%procs {
			count++
		}
		args := []string{"-child", "-systems", sys.ID, "-n", strconv.Itoa(count), "-topology", t.Topology(), "-redis", strings.Join(t.Addrs, ",")}
		k, err := startChild(ctx, exe, args)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: start child %d of %d: %w", sys.Name, i+1, procs, err)
		}
		f.kids = append(f.kids, k)
	}
	// Every child starts its instances at once; wait for each to be ready.
	err = f.all(func(k *child) error {
		_, err := k.answer(readyWithin+10*time.Second, "ready")
		return err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: start %d instances in %d processes: %w", sys.Name, n, procs, err)
	}
	return f, nil
}

func startChild(ctx context.Context, exe string, args []string) (*child, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}, nil
}

// answer waits up to d for the child's next line, which must start with
// want, and returns the rest of it.
func (k *child) answer(d time.Duration, want string) (string, error) {
	type line struct {
		s  string
		ok bool
	}
	got := make(chan line, 1)
	go func() { ok := k.out.Scan(); got <- line{k.out.Text(), ok} }()
	select {
	case l := <-got:
		if !l.ok {
			return "", fmt.Errorf("child %d exited without answering (its stderr is above)", k.cmd.Process.Pid)
		}
		if msg, ok := strings.CutPrefix(l.s, "error "); ok {
			return "", fmt.Errorf("child %d: %s", k.cmd.Process.Pid, msg)
		}
		rest, ok := strings.CutPrefix(l.s, want)
		if !ok {
			return "", fmt.Errorf("child %d answered %q, not %s", k.cmd.Process.Pid, l.s, want)
		}
		return strings.TrimSpace(rest), nil
	case <-time.After(d):
		// The reading goroutine ends when Close kills the child.
		return "", fmt.Errorf("child %d did not answer %s within %v", k.cmd.Process.Pid, want, d)
	}
}

func (k *child) ask(req, want string, d time.Duration) (string, error) {
	if _, err := fmt.Fprintln(k.stdin, req); err != nil {
		return "", fmt.Errorf("child %d: send %s: %w", k.cmd.Process.Pid, req, err)
	}
	return k.answer(d, want)
}

// all runs fn on every child at once and joins their errors.
func (f *procFleet) all(fn func(*child) error) error {
	errs := make([]error, len(f.kids))
	done := make(chan struct{})
	for i, k := range f.kids {
		go func() { errs[i] = fn(k); done <- struct{}{} }()
	}
	for range f.kids {
		<-done
	}
	return errors.Join(errs...)
}

func (f *procFleet) Hold(context.Context) error {
	return f.all(func(k *child) error {
		_, err := k.ask("hold", "ok", holdWithin+10*time.Second)
		return err
	})
}

func (f *procFleet) Held(context.Context) (int, error) {
	var total atomic.Int64
	err := f.all(func(k *child) error {
		s, err := k.ask("held", "held", 30*time.Second)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("child %d answered held %q, not a count", k.cmd.Process.Pid, s)
		}
		total.Add(int64(n))
		return nil
	})
	return int(total.Load()), err
}

// Close closes each child's stdin, on which it closes its instances and
// exits, and kills those still running 30 s later.
func (f *procFleet) Close() error {
	return f.all(func(k *child) error {
		k.stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- k.cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("child %d: %w", k.cmd.Process.Pid, err)
			}
			return nil
		case <-time.After(30 * time.Second):
			k.cmd.Process.Kill()
			<-exited
			return fmt.Errorf("child %d did not exit within 30s of its stdin closing; killed", k.cmd.Process.Pid)
		}
	})
}

// runChild is the program run with -child: one share of a procs fleet.
func runChild(ctx context.Context, fs *flag.FlagSet, stdin io.Reader, stdout io.Writer) error {
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	fail := func(err error) error {
		fmt.Fprintf(stdout, "error %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return err
	}
	sys, err := lookupSystem(get("systems"))
	if err != nil {
		return fail(err)
	}
	n, err := strconv.Atoi(get("n"))
	if err != nil || n < 1 || n > maxN {
		return fail(fmt.Errorf("-child needs -n of one count from 1 to %d, got %q", maxN, get("n")))
	}
	t := Target{Cluster: get("topology") == "cluster", Addrs: strings.Split(get("redis"), ",")}
	f, err := newLocalFleet(ctx, sys, t, n)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintln(stdout, "ready")
	err = serveChild(ctx, f, stdin, stdout)
	if err != nil {
		fail(err)
	}
	return errors.Join(err, f.Close())
}

// serveChild answers the parent's requests until its stdin ends.
func serveChild(ctx context.Context, f *localFleet, stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewScanner(stdin)
	for in.Scan() {
		switch in.Text() {
		case "hold":
			if err := f.Hold(ctx); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "ok")
		case "held":
			held, err := f.Held(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "held %d\n", held)
		default:
			return fmt.Errorf("unknown request %q", in.Text())
		}
	}
	return in.Err()
}
