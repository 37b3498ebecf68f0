// Command hotkeygen generates typed Redis repositories, with hot keys
// served from memory, for structs annotated with //hotkey:cache.
//
// Usage:
//
//	hotkeygen [flags] [packages]
//
// Packages are go package patterns (default "."), so a package can say
//
//	//go:generate go tool hotkeygen
//
// Each package with annotations gets one file, hotkey_gen.go, beside its
// sources; a package whose last annotation went loses the file (only if it
// starts with the generated-code header: a file someone else wrote is never
// touched). Files whose content is already right are left alone. On any
// error, reported as file:line:col: message, nothing is written, in any
// package.
//
// Flags:
//
//	-check        write nothing; list each stale, missing or superfluous
//	              file with a diff, and exit 1 if there is any
//	-format f     print findings (errors, warnings, -check's files) as
//	              text, on stderr (the default), or as json (one
//	              document) or github (GitHub Actions workflow commands),
//	              on stdout
//	-output name  generate name instead of hotkey_gen.go
//	-v            say what was generated, and which parts of values are
//	              copied shallowly
//	-version      print the version (as does hotkeygen version)
//
// Every finding names the rule it breaks (UNKNOWN_OPTION, STALE_FILE, …),
// which the json and github formats print; docs/findings.md in the
// repository lists them with what to do about each. The exit status is 0
// when nothing fails (warnings alone do not), 1 on an error or, with
// -check, a file out of date, and 2 on a usage error, in every format.
//
// # Generated code
//
// For
//
//	//hotkey:cache key=order:{Tenant}:{Num} ttl=1h
//	type Order struct { Tenant string; Num uint32; Items []Item }
//
// hotkeygen writes:
//
//	type OrderRepo struct{ ... }
//	func NewOrderRepo(rdb redis.UniversalClient, opts ...runtime.Option) (*OrderRepo, error)
//	func MustNewOrderRepo(rdb redis.UniversalClient, opts ...runtime.Option) *OrderRepo
//	func WithOrderLoader(load func(ctx context.Context, tenant string, num uint32) (*Order, error)) runtime.Option
//	func WithOrdersLoader(load func(ctx context.Context, keys []OrderKey) (map[OrderKey]*Order, error)) runtime.Option
//	func (r *OrderRepo) GetOrder(ctx context.Context, tenant string, num uint32) (*Order, error)
//	func (r *OrderRepo) GetOrders(ctx context.Context, keys []OrderKey) ([]*Order, error)
//	func (r *OrderRepo) SetOrder(ctx context.Context, v *Order) error // an error for a nil v
//	func (r *OrderRepo) DelOrder(ctx context.Context, tenant string, num uint32) error
//	func (r *OrderRepo) Stats() runtime.Stats
//	func (r *OrderRepo) History() []runtime.Sample
//	func (r *OrderRepo) Close() error
//	func (v *Order) AppendMsgpack(b []byte) ([]byte, error) // and ReadMsgpack, EncodeMsgpack, DecodeMsgpack
//	type OrderKey struct{ Tenant string; Num uint32 }
//	func (k OrderKey) String() string // "order:t1:5" for OrderKey{Tenant: "t1", Num: 5}
//
// NewOrderRepo returns an error when the options contradict each other or
// the annotation, or when rdb cannot carry the invalidation (a *redis.Ring
// or a *redis.AutoPipeliner needs invalidate=pubsub or off);
// MustNewOrderRepo panics with it, for options fixed in the code.
// Collections (layout=hash), the change buffer (changes=on) and the Bloom
// filter (bloom=on) add their methods; docs/ in the repository lists them.
//
// The repository's cache is keyed by OrderKey, so a read served from
// memory never builds the Redis key; for the same reason, no field of such
// a key may be named String. A key of one field needs no struct: for
// key=user:{ID} the cache is keyed by the type of ID, UserKey is a
// function, func UserKey(id int64) string, and GetUsers takes ids []int64.
//
// String key fields are percent-escaped in the Redis key (see
// runtime.AppendKeyString): "%" and every ASCII byte of the template's
// literal text that is not a letter or a digit, so for
// key=acct:{Org}:{User} Org "a:b" with User "c" is acct:a%3Ab:c and Org
// "a" with User "b:c" is acct:a:b%3Ac, never the same key. A string without
// those bytes is written unchanged. Integers are written in decimal.
//
// GetOrders reads many keys at once and returns their values aligned with
// the keys, nil where one is absent. The loader options read through to
// the source of truth on a Redis miss: NewOrderRepo(rdb,
// WithOrderLoader(f)) calls f when GetOrder misses, writes what it returns
// to Redis, and remembers an absent row (f's error wraps
// runtime.ErrNotFound) for null_ttl; WithOrdersLoader serves the misses of
// GetOrders in one call. The loader takes the key as GetOrder does; the
// batch loader takes the keys as the cache holds them.
//
// Names come from the type, or from name= (name=Account gives AccountRepo,
// GetAccount, AccountKey), with the first letter upper-cased. The batch
// read and loader are named by a simple plural: "es" after ss, x, z, ch
// and sh (GetAddresses, GetBoxes), "ies" for a consonant and y
// (GetCategories), "s" otherwise (GetUsers, GetDays, and GetSKUs for a
// name ending in a capital). A name already ending in a single s (News,
// Series) is taken as its own plural, and gets List instead: GetNewsList,
// WithNewsListLoader. The batch parameter is named the same way after the
// key parameter (ids), or keys when the key is a struct. Stats and
// logs name the entity with the first word lowered ("order", "orderLine").
// Parameters are the key fields in template order, named after them with
// the first word lowered ("UserID" gives userID), an underscore appended
// when that name is a keyword or is taken. Key fields may be strings,
// integers, or named types based on one; they keep their declared type,
// in the parameters and in the key struct alike.
//
// The annotation's options become the repository's defaults, which opts
// override. Every read returns a deep copy made by a generated clone
// function; parts that cannot be copied (interfaces, functions, channels,
// another package's unexported fields) are shared, and -v lists them.
// Guard functions break the build when a key field or a copied type
// changes under the generated code, with a message that says so itself:
// "cannot convert new(User) (value of type *User) to type
// *generated_code_is_stale__run_go_generate".
//
// # Watching hot keys across replicas
//
//	hotkeygen top [-redis addr] [-entity name] [-every 1s] [-n 20] [-window 10s] [-once]
//
// shows the keys read most across every replica of repositories whose
// annotation says aggregate=on: for the last detection window all
// replicas have reported, each key's reads per second summed over the
// replicas and its share of the reads its entity's replicas reported,
// busiest first. The table is redrawn every -every until Ctrl-C; -once
// prints it once. -redis defaults to $REDIS_ADDR, or 127.0.0.1:6379; a
// comma-separated list of addresses is a Redis Cluster (end a single seed
// address with a comma). -window must be the entities' window (10s unless
// their annotation sets window=). Without -entity, entities are found by
// a SCAN for hotkeygen:agg:*, repeated once a minute.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hotkeygen/hotkeygen/generator"
	"github.com/hotkeygen/hotkeygen/internal/findings"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "top":
			os.Exit(topMain(os.Args[2:]))
		case "version":
			fmt.Println(version())
			return
		}
	}
	os.Exit(run(os.Args[1:], "", os.Stdout, os.Stderr))
}

// Exit statuses of hotkeygen, the same in every -format.
const (
	exitClean    = 0 // nothing that fails: warnings alone do not
	exitFindings = 1 // an error, or a file -check finds out of date
	exitUsage    = 2 // a flag or a -format hotkeygen does not know
)

// exitStatuses is the usage text's account of the exit statuses.
const exitStatuses = `exit status: 0 when nothing fails (warnings alone do not), 1 on an error
or an out-of-date file (-check), 2 on a usage error such as an unknown flag`

// run is the command, minus the process: it parses args, generates from
// dir (empty for the current directory), reports and returns the exit
// status. Findings go to stderr in the text format, to stdout in the
// others, which tools read; everything else (-v, usage) to stderr.
func run(args []string, dir string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hotkeygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	check := fs.Bool("check", false, "report stale, missing or superfluous files and exit 1 if any, writing nothing")
	format := fs.String("format", string(findings.Text), "print findings as text (on stderr), json or github (on stdout; see docs/findings.md)")
	output := fs.String("output", generator.DefaultOutput, "name of the generated file in each package")
	verbose := fs.Bool("v", false, "say what was generated and which parts of values are copied shallowly")
	showVersion := fs.Bool("version", false, "print hotkeygen's version and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hotkeygen [-check] [-format text|json|github] [-output name] [-v] [packages]")
		fmt.Fprintln(stderr, "       hotkeygen version")
		fmt.Fprintln(stderr, "       "+strings.TrimPrefix(topUsage, "usage: "))
		fs.PrintDefaults()
		fmt.Fprintln(stderr, exitStatuses)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitClean
		}
		return exitUsage
	}
	if *showVersion {
		fmt.Fprintln(stderr, version())
		return exitClean
	}
	f, err := findings.ParseFormat(*format)
	if err != nil {
		fmt.Fprintf(stderr, "hotkeygen: -format: %v\n", err)
		return exitUsage
	}
	rep := &reporter{format: f, stdout: stdout, stderr: stderr}

	res, err := generator.Generate(generator.Config{Dir: dir, Patterns: fs.Args(), Output: *output})
	if err != nil {
		return rep.fail(err)
	}
	rep.add(res.Warnings)
	if *verbose {
		for _, n := range res.Notes {
			fmt.Fprintln(stderr, n)
		}
	}
	if *check {
		changes, err := res.Changes()
		if err != nil {
			return rep.fail(err)
		}
		if len(changes) > 0 {
			rep.changes(res, changes)
			return rep.end(exitFindings)
		}
		return rep.end(exitClean)
	}
	changes, err := res.Write()
	if err != nil {
		return rep.fail(err)
	}
	if *verbose {
		for _, c := range changes {
			verb := "wrote"
			if c.Kind == generator.Superfluous {
				verb = "removed"
			}
			fmt.Fprintf(stderr, "%s %s\n", verb, res.Rel(c.Path))
		}
	}
	return rep.end(exitClean)
}
