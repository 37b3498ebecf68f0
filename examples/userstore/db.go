package userstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver "pgx"
	_ "modernc.org/sqlite"             // the driver "sqlite", in pure Go

	"github.com/hotkeygen/hotkeygen/runtime"
)

// DB is the database behind the repositories, the source of truth:
// SQLite in memory by default, PostgreSQL when given a postgres:// URL.
// Its methods are the loaders the repositories read through and the
// writes of the service, each followed by what the cache needs to hear
// of it (docs/database-changes.md). Queries counts the calls it served:
// what the cache did not take from it.
//
// Queries are written once for both: SQLite takes PostgreSQL's $1
// placeholders, and tags and items are JSON in a text column.
type DB struct {
	sql     *sql.DB
	queries atomic.Uint64
}

const (
	insertUser  = `INSERT INTO users (id, name, email, tags) VALUES ($1, $2, $3, $4)`
	insertOrder = `INSERT INTO orders (tenant, num, items, total) VALUES ($1, $2, $3, $4)`
)

const schema = `
CREATE TABLE IF NOT EXISTS users (id BIGINT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, tags TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS orders (tenant TEXT NOT NULL, num BIGINT NOT NULL, items TEXT NOT NULL, total BIGINT NOT NULL, PRIMARY KEY (tenant, num))`

// OpenDB opens the database at url, a postgres:// URL (DATABASE_URL), or
// a new SQLite database in memory when url is empty, and creates the
// tables users and orders where they are missing.
func OpenDB(ctx context.Context, url string) (*DB, error) {
	driver, dsn := "pgx", url
	switch {
	case url == "":
		driver, dsn = "sqlite", ":memory:"
	case !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://"):
		return nil, fmt.Errorf("database %q: want a postgres:// URL, or none for SQLite in memory", url)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	if driver == "sqlite" {
		db.SetMaxOpenConns(1) // each connection to ":memory:" is a database of its own
	} else {
		// Keep the connections open: a new one to PostgreSQL starts a
		// process, and database/sql keeps 2 idle by default.
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(16)
	}
	for stmt := range strings.SplitSeq(schema, ";") {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("create the tables: %w", err)
		}
	}
	return &DB{sql: db}, nil
}

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// Queries returns how many loads and writes the database has served.
func (db *DB) Queries() uint64 { return db.queries.Load() }

// User loads a user: the loader of WithUserLoader.
func (db *DB) User(ctx context.Context, id int64) (*User, error) {
	db.queries.Add(1)
	u := &User{ID: id}
	var tags string
	err := db.sql.QueryRowContext(ctx, `SELECT name, email, tags FROM users WHERE id = $1`, id).Scan(&u.Name, &u.Email, &tags)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("user %d: %w", id, runtime.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return u, json.Unmarshal([]byte(tags), &u.Tags)
}

// SaveUser writes u to the database, then deletes its key from Redis
// (update, then delete): the next read loads the new row, on every
// instance, and a load that read the old row before the update never
// writes it back after the delete.
func (db *DB) SaveUser(ctx context.Context, users *UserRepo, u *User) error {
	db.queries.Add(1)
	tags, err := json.Marshal(u.Tags)
	if err != nil {
		return err
	}
	if _, err := db.sql.ExecContext(ctx, insertUser+` ON CONFLICT (id) DO UPDATE SET name = excluded.name, email = excluded.email, tags = excluded.tags`, u.ID, u.Name, u.Email, string(tags)); err != nil {
		return err
	}
	return users.DelUser(ctx, u.ID)
}

// Order loads an order: the loader of WithOrderLoader.
func (db *DB) Order(ctx context.Context, tenant string, num uint32) (*Order, error) {
	rows, err := db.Orders(ctx, []OrderKey{{tenant, num}})
	if err != nil {
		return nil, err
	}
	if o := rows[OrderKey{tenant, num}]; o != nil {
		return o, nil
	}
	return nil, fmt.Errorf("order %s:%d: %w", tenant, num, runtime.ErrNotFound)
}

// Orders loads many orders in one query, those that exist: the loader of
// WithOrdersLoader, which the change buffer's sync calls with each batch.
func (db *DB) Orders(ctx context.Context, keys []OrderKey) (map[OrderKey]*Order, error) {
	out := make(map[OrderKey]*Order, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	db.queries.Add(1)
	where := make([]string, len(keys))
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		where[i] = "(tenant = $" + strconv.Itoa(2*i+1) + " AND num = $" + strconv.Itoa(2*i+2) + ")"
		args = append(args, k.Tenant, int64(k.Num))
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT tenant, num, items, total FROM orders WHERE `+strings.Join(where, " OR "), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var o Order
		var items string
		if err := rows.Scan(&o.Tenant, &o.Num, &items, &o.Total); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(items), &o.Items); err != nil {
			return nil, err
		}
		out[OrderKey{o.Tenant, o.Num}] = &o
	}
	return out, rows.Err()
}

// OrderKeys returns the key of every order, to warm the orders' Bloom
// filter with (WarmOrderBloom).
func (db *DB) OrderKeys(ctx context.Context) ([]OrderKey, error) {
	db.queries.Add(1)
	rows, err := db.sql.QueryContext(ctx, `SELECT tenant, num FROM orders`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []OrderKey
	for rows.Next() {
		var k OrderKey
		if err := rows.Scan(&k.Tenant, &k.Num); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// AddOrder adds o with its tenant's next number, which it sets in
// o.Num; AddToOrder adds to an order's total, and DeleteOrder deletes
// one. Each changes the database in a transaction and, once it has
// committed, marks the order changed (update, then mark): the change
// buffer loads the row anew and writes it to Redis, or deletes the key
// of a row that is gone. An error after the commit leaves the row
// changed and unmarked: send the mark again (MarkOrderChanged), or Redis
// keeps the old row until its TTL.
func (db *DB) AddOrder(ctx context.Context, orders *OrderRepo, o *Order) error {
	items, err := json.Marshal(o.Items)
	if err != nil {
		return err
	}
	return db.changeOrder(ctx, orders, o.Tenant, func(tx *sql.Tx) (uint32, error) {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(num), 0) + 1 FROM orders WHERE tenant = $1`, o.Tenant).Scan(&o.Num); err != nil {
			return 0, err
		}
		_, err := tx.ExecContext(ctx, insertOrder, o.Tenant, int64(o.Num), string(items), o.Total)
		return o.Num, err
	})
}

// AddToOrder adds cents to the total of an order (see AddOrder).
func (db *DB) AddToOrder(ctx context.Context, orders *OrderRepo, tenant string, num uint32, cents int64) error {
	return db.changeOrder(ctx, orders, tenant, func(tx *sql.Tx) (uint32, error) {
		_, err := tx.ExecContext(ctx, `UPDATE orders SET total = total + $3 WHERE tenant = $1 AND num = $2`, tenant, int64(num), cents)
		return num, err
	})
}

// DeleteOrder deletes an order (see AddOrder).
func (db *DB) DeleteOrder(ctx context.Context, orders *OrderRepo, tenant string, num uint32) error {
	return db.changeOrder(ctx, orders, tenant, func(tx *sql.Tx) (uint32, error) {
		_, err := tx.ExecContext(ctx, `DELETE FROM orders WHERE tenant = $1 AND num = $2`, tenant, int64(num))
		return num, err
	})
}

// changeOrder runs change, which returns the number of the order of
// tenant it changed, in a transaction, and marks the order changed once
// the transaction has committed.
func (db *DB) changeOrder(ctx context.Context, orders *OrderRepo, tenant string, change func(*sql.Tx) (uint32, error)) error {
	db.queries.Add(1)
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	num, err := change(tx)
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// Committed: the mark must go out even if ctx ends now.
	if err := orders.MarkOrderChanged(context.WithoutCancel(ctx), OrderKey{tenant, num}); err != nil {
		return fmt.Errorf("order %s:%d committed, but not marked changed: %w", tenant, num, err)
	}
	return nil
}

// Seed adds the users and orders the database lacks, in one transaction,
// as a service's data is there before it starts: rows it has already are
// left as they are, and nothing is written to Redis.
func (db *DB) Seed(ctx context.Context, users []*User, orders []*Order) error {
	db.queries.Add(1)
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // nothing after Commit
	for _, u := range users {
		tags, _ := json.Marshal(u.Tags)
		if _, err := tx.ExecContext(ctx, insertUser+` ON CONFLICT DO NOTHING`, u.ID, u.Name, u.Email, string(tags)); err != nil {
			return err
		}
	}
	for _, o := range orders {
		items, _ := json.Marshal(o.Items)
		if _, err := tx.ExecContext(ctx, insertOrder+` ON CONFLICT DO NOTHING`, o.Tenant, int64(o.Num), string(items), o.Total); err != nil {
			return err
		}
	}
	return tx.Commit()
}
