package userstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/hotkeygen/hotkeygen/examples/userstore"
	"github.com/hotkeygen/hotkeygen/internal/testing/pgtest"
	"github.com/hotkeygen/hotkeygen/internal/testing/redistest"
)

// redisAddr is the address of the redis-server the examples run against,
// and postgres the PostgreSQL server the tests give databases of,
// started by TestMain: in a service they are wherever Redis and the
// database run.
var (
	redisAddr string
	postgres  *pgtest.Server
)

func TestMain(m *testing.M) {
	os.Exit(redistest.RunWithServer(&redisAddr, func() int { return pgtest.RunWithServer(&postgres, m.Run) }))
}

// onEachDatabase runs test on both databases the example supports:
// SQLite in memory, and an empty database of the PostgreSQL server.
func onEachDatabase(t *testing.T, test func(t *testing.T, db *userstore.DB)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			url := ""
			if name == "postgres" {
				url = postgres.NewDatabase(t)
			}
			db, err := userstore.OpenDB(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			test(t, db)
		})
	}
}

// queriesOf returns how many queries do made of db.
func queriesOf(t *testing.T, db *userstore.DB, do func()) uint64 {
	t.Helper()
	before := db.Queries()
	do()
	return db.Queries() - before
}
