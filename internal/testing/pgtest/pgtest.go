// Package pgtest starts a private PostgreSQL server for tests.
//
// The server is Debian's (or any) PostgreSQL: initdb makes a cluster in a
// temporary directory, and pg_ctl starts it on a free loopback port, with
// its Unix socket in that directory too, fsync off, trust authentication
// and the superuser postgres. A machine without PostgreSQL fails the test
// with instructions; tests that need it never skip.
//
// PostgreSQL refuses to run as root. Run as root, as CI runs, the cluster
// belongs to the unprivileged user nobody: its directory is given to
// nobody, and initdb and pg_ctl run as nobody.
//
// Starting a cluster takes a second or two, so a test binary shares one:
// start it in TestMain with RunWithServer, and give each test a database
// of its own with NewDatabase.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"

	"github.com/jackc/pgx/v5"
)

// Install tells the reader how to get PostgreSQL.
const Install = "PostgreSQL is not installed: run `apt-get install -y postgresql` (Debian/Ubuntu; .ci/run does it) or `brew install postgresql`; " +
	"the tests look for initdb and pg_ctl on the PATH, then in /usr/lib/postgresql/<version>/bin"

// installRoot is where Debian's packages put each version's programs.
var installRoot = "/usr/lib/postgresql"

// Server is a running PostgreSQL cluster.
type Server struct {
	URL string // of the database postgres, as the superuser postgres

	bin   string // the directory of initdb and pg_ctl
	dir   string // the cluster's data, its socket and its log
	owner *owner // who runs it: nil for the user running the tests
	dbs   atomic.Int64
}

// Launch makes a cluster and starts it, for TestMain or a program; the
// caller stops it.
func Launch() (*Server, error) {
	bin, err := bindir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir}
	if s.owner, err = unprivileged(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.run("initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.configure(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for range 5 { // a free port can be taken between probe and bind
		port, perr := redistest.FreePort()
		if perr != nil {
			err = perr
			break
		}
		if err = s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.data(), "-l", s.log(), "-o", "-p "+strconv.Itoa(port)); err == nil {
			s.URL = "postgres://postgres@" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/postgres?sslmode=disable"
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, err
}

// Stop stops the server, as fast as it stops, and removes its directory.
func (s *Server) Stop() {
	s.run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", s.data())
	os.RemoveAll(s.dir)
}

// NewDatabase creates an empty database for t and returns its URL: tests
// sharing the server do not see each other's tables.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "test_" + strconv.FormatInt(s.dbs.Add(1), 10)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", s.URL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// RunWithServer runs run, the package's tests (m.Run), with a server it
// stores in *srv first, and stops the server after. It returns run's exit
// code, 1 when no server could be started.
func RunWithServer(srv **Server, run func() int) int {
	s, err := Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Stop()
	*srv = s
	return run()
}

// configure adds the test server's settings to the cluster's
// postgresql.conf, where later lines win: TCP on loopback only, the Unix
// socket in the server's directory rather than /var/run/postgresql, and
// no waiting for the disk, which a test's data does not need.
func (s *Server) configure() error {
	f, err := os.OpenFile(filepath.Join(s.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	_, err = fmt.Fprintf(f, "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n",
		strings.ReplaceAll(s.dir, "'", "''"))
	return errors.Join(err, f.Close())
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }
func (s *Server) log() string  { return filepath.Join(s.dir, "log") }

// run runs the program name of the server's installation as its owner, and
// returns an error with its output, and the server's log, if it fails.
func (s *Server) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	s.owner.apply(cmd)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	log, _ := os.ReadFile(s.log())
	return fmt.Errorf("pgtest: %s %v: %v\n%s%s", name, args, err, out, log)
}

// bindir is the directory of initdb and pg_ctl: the PATH's, or the
// newest version's under installRoot.
func bindir() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			// Debian links them into the PATH one by one, if at all: the
			// directory of the real pg_ctl has initdb and postgres beside it.
			if real, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Dir(real), nil
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(installRoot, "*", "bin"))
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New(Install)
}

// version is the major version of a directory installRoot/<version>/bin.
func version(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}
