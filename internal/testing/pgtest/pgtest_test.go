package pgtest

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A server gives each test a database of its own, and Stop leaves
// nothing behind.
func TestDatabasesAreApart(t *testing.T) {
	srv, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	a, b := connect(t, srv.NewDatabase(t)), connect(t, srv.NewDatabase(t))
	if _, err := a.Exec(ctx, "CREATE TABLE t (n int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, "SELECT n FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the row written reads as %d, %v", n, err)
	}
	if _, err := b.Exec(ctx, "SELECT n FROM t"); err == nil {
		t.Fatal("a table of one database is seen in another")
	}

	a.Close(ctx)
	b.Close(ctx)
	srv.Stop()
	if _, err := os.Stat(srv.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Stop, %s is still there: %v", srv.dir, err)
	}
	if c, err := pgx.Connect(ctx, srv.URL); err == nil {
		c.Close(ctx)
		t.Error("the server answers after Stop")
	}
}

// Without PostgreSQL, Launch says how to install it.
func TestWithoutPostgreSQLLaunchSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	root := installRoot
	installRoot = t.TempDir()
	defer func() { installRoot = root }()
	if _, err := Launch(); err == nil || err.Error() != Install {
		t.Fatalf("Launch without PostgreSQL: %v, want %q", err, Install)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
