package annotations

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/runtime"
)

// parseDoc parses user.go, in which the doc lines start on line 3 and
// document type User, and returns what Parse makes of that doc.
func parseDoc(t *testing.T, doc ...string) (*Spec, error) {
	t.Helper()
	src := "package p\n\n" + strings.Join(doc, "\n") + "\ntype User struct{ ID int64 }\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "user.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	decl := f.Decls[0].(*ast.GenDecl)
	return Parse(fset, decl.Doc, decl.Specs[0].(*ast.TypeSpec).Doc)
}

// errorLines splits an ErrorList back into its lines.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

// argStrings renders arguments as "name=value at line:col".
func argStrings(args []Arg) []string {
	var out []string
	for _, a := range args {
		out = append(out, fmt.Sprintf("%s=%s at %d:%d", a.Name, a.Value, a.Pos.Line, a.Pos.Column))
	}
	return out
}

// wellFormed lists directives that parse, with the Spec they describe.
var wellFormed = []struct {
	name string
	doc  []string
	// want changes the runtime's defaults into the expected Spec.
	want func(*Spec)
	key  string
	args []string
}{{
	name: "a directive with only a key takes every other value from the runtime's defaults",
	doc:  []string{"//hotkey:cache key=user:{ID}"},
	want: func(*Spec) {},
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16"},
}, {
	name: "every option is set by its name, across merged lines, in source order",
	doc: []string{
		"// User is an account holder.",
		"//",
		"//hotkey:cache key=user:{ID} ttl=30m hot_qps=2500.5 warm_qps=100 top_n=20",
		"//hotkey:cache window=20s promote_every=2s demote_every=30s local_size=400 local_ttl=2h",
		"//hotkey:cache refresh=1m refresh_failures=5 recorder_size=5000 inactive_after=10m name=Account",
		"//hotkey:cache null_ttl=30s jitter=10% rebuild_lock=on degrade=loader max_value_bytes=64KiB max_value_bytes_hard=1MiB",
	},
	want: func(s *Spec) {
		s.TTL = 30 * time.Minute
		s.HotQPS, s.WarmQPS, s.TopN = 2500.5, 100, 20
		s.Window, s.PromoteEvery, s.DemoteEvery = 20*time.Second, 2*time.Second, 30*time.Second
		s.LocalSize, s.LocalTTL = 400, 2*time.Hour
		s.Refresh, s.RefreshFailures = time.Minute, 5
		s.RecorderSize, s.InactiveAfter = 5000, 10*time.Minute
		s.Name = "Account"
		s.NullTTL, s.Jitter, s.RebuildLock, s.Degrade = 30*time.Second, 0.1, true, runtime.DegradeLoader
		s.MaxValueBytes, s.MaxValueBytesHard = 64<<10, 1<<20
	},
	key: "user:{ID}",
	args: []string{
		"key=user:{ID} at 5:16", "ttl=30m at 5:30", "hot_qps=2500.5 at 5:38", "warm_qps=100 at 5:53", "top_n=20 at 5:66",
		"window=20s at 6:16", "promote_every=2s at 6:27", "demote_every=30s at 6:44", "local_size=400 at 6:61", "local_ttl=2h at 6:76",
		"refresh=1m at 7:16", "refresh_failures=5 at 7:27", "recorder_size=5000 at 7:46", "inactive_after=10m at 7:65", "name=Account at 7:84",
		"null_ttl=30s at 8:16", "jitter=10% at 8:29", "rebuild_lock=on at 8:40", "degrade=loader at 8:56",
		"max_value_bytes=64KiB at 8:71", "max_value_bytes_hard=1MiB at 8:93",
	},
}, {
	name: "a quoted value may hold spaces and escapes",
	doc:  []string{`//hotkey:cache key="user \"{Org}\" {ID}" ttl=1h`},
	want: func(s *Spec) { s.TTL = time.Hour },
	key:  `user "{Org}" {ID}`,
	args: []string{`key=user "{Org}" {ID} at 3:16`, "ttl=1h at 3:42"},
}, {
	name: "a bare 0 is a duration: no Redis expiry, no refresh, no placeholder for absent rows",
	doc:  []string{"//hotkey:cache key=user:{ID} ttl=0 refresh=0 null_ttl=0"},
	want: func(s *Spec) { s.TTL, s.Refresh, s.NullTTL = 0, 0, 0 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "ttl=0 at 3:30", "refresh=0 at 3:36", "null_ttl=0 at 3:46"},
}, {
	name: "a jitter is a decimal fraction of the TTL",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=0.125"},
	want: func(s *Spec) { s.Jitter = 0.125 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "jitter=0.125 at 3:30"},
}, {
	name: "a jitter in percent is the fraction with the same digits, not 0.7/100 rounded twice",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=0.7%"},
	want: func(s *Spec) { s.Jitter = 0.007 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "jitter=0.7% at 3:30"},
}, {
	name: "a jitter of 0 spreads nothing",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=0"},
	want: func(s *Spec) { s.Jitter = 0 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "jitter=0 at 3:30"},
}, {
	name: "rebuild_lock=true keeps the leases on like on",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock=true"},
	want: func(s *Spec) { s.RebuildLock = true },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "rebuild_lock=true at 3:30"},
}, {
	name: "rebuild_lock=off turns the leases off",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock=off"},
	want: func(s *Spec) { s.RebuildLock = false },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "rebuild_lock=off at 3:30"},
}, {
	name: "rebuild_lock=false is off too",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock=false"},
	want: func(s *Spec) { s.RebuildLock = false },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "rebuild_lock=false at 3:30"},
}, {
	name: "aggregate=on adds cluster-wide detection, at hot_qps across replicas unless cluster_hot_qps says otherwise",
	doc:  []string{"//hotkey:cache key=user:{ID} aggregate=on"},
	want: func(s *Spec) { s.Aggregate = true },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "aggregate=on at 3:30"},
}, {
	name: "aggregate=false keeps detection per instance, as by default",
	doc:  []string{"//hotkey:cache key=user:{ID} aggregate=false"},
	want: func(s *Spec) { s.Aggregate = false },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "aggregate=false at 3:30"},
}, {
	name: "cluster_hot_qps is a rate of reads over every replica",
	doc:  []string{"//hotkey:cache key=user:{ID} aggregate=true cluster_hot_qps=12000.5"},
	want: func(s *Spec) { s.Aggregate, s.ClusterHotQPS = true, 12000.5 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "aggregate=true at 3:30", "cluster_hot_qps=12000.5 at 3:45"},
}, {
	name: "degrade=off returns Redis errors, as by default",
	doc:  []string{"//hotkey:cache key=user:{ID} degrade=off"},
	want: func(s *Spec) { s.Degrade = runtime.DegradeOff },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "degrade=off at 3:30"},
}, {
	name: "a size in KiB or MiB counts 1024-byte units",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=512KiB max_value_bytes_hard=2MiB"},
	want: func(s *Spec) { s.MaxValueBytes, s.MaxValueBytesHard = 512<<10, 2<<20 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "max_value_bytes=512KiB at 3:30", "max_value_bytes_hard=2MiB at 3:53"},
}, {
	name: "a size may be a bare number of bytes or carry B",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=1000 max_value_bytes_hard=4096B"},
	want: func(s *Spec) { s.MaxValueBytes, s.MaxValueBytesHard = 1000, 4096 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "max_value_bytes=1000 at 3:30", "max_value_bytes_hard=4096B at 3:51"},
}, {
	name: "max_value_bytes=0 turns the big-value warning off",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=0"},
	want: func(s *Spec) { s.MaxValueBytes = 0 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "max_value_bytes=0 at 3:30"},
}, {
	name: "tabs and repeated spaces separate arguments",
	doc:  []string{"//hotkey:cache\tkey=user:{ID}  \ttop_n=5  "},
	want: func(s *Spec) { s.TopN = 5 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "top_n=5 at 3:32"},
}, {
	name: "hot_qps alone is enough: warm_qps follows it",
	doc:  []string{"//hotkey:cache key=user:{ID} hot_qps=100"},
	want: func(s *Spec) { s.HotQPS = 100 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "hot_qps=100 at 3:30"},
}, {
	name: "local_size alone is enough: top_n follows it",
	doc:  []string{"//hotkey:cache key=user:{ID} local_size=5"},
	want: func(s *Spec) { s.LocalSize = 5 },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "local_size=5 at 3:30"},
}, {
	name: "local_ttl alone is enough: refresh follows it",
	doc:  []string{"//hotkey:cache key=user:{ID} local_ttl=5s"},
	want: func(s *Spec) { s.LocalTTL = 5 * time.Second },
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 3:16", "local_ttl=5s at 3:30"},
}, {
	name: "other comments and other tools' directives are ignored",
	doc: []string{
		"// User is cached; see hotkey:cache in the README.",
		"//go:generate hotkeygen",
		"/* hotkey:cache key=x */",
		"//hotkey:cache key=user:{ID}",
		"//lint:ignore U1000 generated",
	},
	want: func(*Spec) {},
	key:  "user:{ID}",
	args: []string{"key=user:{ID} at 6:16"},
}}

func TestParseAcceptsWellFormedDirectives(t *testing.T) {
	for _, tt := range wellFormed {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseDoc(t, tt.doc...)
			if err != nil {
				t.Fatalf("unexpected error:\n%v", err)
			}
			want := newSpec()
			tt.want(&want)
			if got.Key.Raw != tt.key {
				t.Errorf("Key.Raw = %q, want %q", got.Key.Raw, tt.key)
			}
			if args := argStrings(got.Args); !reflect.DeepEqual(args, tt.args) {
				t.Errorf("Args = %q\nwant %q", args, tt.args)
			}
			if got.Pos.Column != 1 || got.Pos.Filename != "user.go" {
				t.Errorf("Pos = %v, want the directive's // in user.go", got.Pos)
			}
			got.Key, got.Args, got.Pos = Template{}, nil, token.Position{}
			if !sameSettings(got.Config, want.Config) || got.Name != want.Name || got.Codec != want.Codec {
				t.Errorf("Spec =\n%+v\nwant\n%+v", *got, want)
			}
		})
	}
}

// malformed lists directives that do not parse, with every error reported.
var malformed = []struct {
	name string
	doc  []string
	errs []string
}{{
	name: "a directive without a key is reported at the directive",
	doc:  []string{"// User is cached.", "//hotkey:cache ttl=30m"},
	errs: []string{"user.go:4:1: //hotkey:cache needs a key; add one like key=user:{ID}"},
}, {
	name: "an unknown option suggests the closest known one",
	doc:  []string{"//hotkey:cache key=user:{ID} hot_qsp=10"},
	errs: []string{`user.go:3:30: unknown option "hot_qsp"; did you mean "hot_qps"?`},
}, {
	name: "an unknown option in upper case suggests the option",
	doc:  []string{"//hotkey:cache key=user:{ID} TTL=1m"},
	errs: []string{`user.go:3:30: unknown option "TTL"; did you mean "ttl"?`},
}, {
	name: "an unknown option far from any known one lists them all",
	doc:  []string{"//hotkey:cache key=user:{ID} color=red"},
	errs: []string{`user.go:3:30: unknown option "color"; the options are aggregate, bloom, bloom_fp, bloom_items, changes, cluster_hot_qps, codec, degrade, demote_every, expires, field, hot_qps, inactive_after, invalidate, jitter, key, layout, local_size, local_ttl, max_value_bytes, max_value_bytes_hard, name, null_ttl, promote_every, rebuild_lock, recorder_size, refresh, refresh_failures, stale_reads, sync_batch, sync_every, sync_lease, sync_ttl, top_n, ttl, version, warm_qps, window`},
}, {
	name: "field and expires without layout=hash are reported at their arguments",
	doc:  []string{"//hotkey:cache key=user:{ID} field={Token} expires=ExpiresAt"},
	errs: []string{
		`user.go:3:30: field: applies only to a collection stored as a hash; add layout=hash, or remove field`,
		`user.go:3:44: expires: applies only to a collection stored as a hash; add layout=hash, or remove expires`,
	},
}, {
	name: "the change buffer and the Bloom filter are refused on a collection",
	doc:  []string{"//hotkey:cache key=token:{UserID} layout=hash field={Token} changes=on bloom=on"},
	errs: []string{
		`user.go:3:61: changes=on is not supported for a collection (layout=hash) yet; remove changes, or keep the rows in a layout=string entity`,
		`user.go:3:72: bloom=on is not supported for a collection (layout=hash) yet; remove bloom, or keep the rows in a layout=string entity`,
	},
}, {
	name: "layout=hash without field says what to add",
	doc:  []string{"//hotkey:cache key=token:{UserID} layout=hash"},
	errs: []string{`user.go:3:35: layout=hash needs field= naming the struct field that tells the items of one collection apart, as in field={Token}`},
}, {
	name: "a misspelt layout suggests the closest",
	doc:  []string{"//hotkey:cache key=token:{UserID} layout=hsah field={Token}"},
	errs: []string{`user.go:3:35: layout: "hsah" is not string or hash; did you mean "hash"?`},
}, {
	name: "a repeated option is reported at its second occurrence",
	doc:  []string{"//hotkey:cache key=user:{ID} ttl=1m ttl=2m"},
	errs: []string{`user.go:3:37: duplicate option "ttl", first set at 3:30; remove one`},
}, {
	name: "an option repeated on a merged line is a duplicate too",
	doc:  []string{"//hotkey:cache key=user:{ID} ttl=1m", "//hotkey:cache ttl=2m"},
	errs: []string{`user.go:4:16: duplicate option "ttl", first set at 3:30; remove one`},
}, {
	name: "an unparsable duration says which form to use",
	doc:  []string{"//hotkey:cache key=user:{ID} ttl=30x"},
	errs: []string{`user.go:3:30: ttl: "30x" is not a duration; use a form like 30s, 5m or 1h`},
}, {
	name: "a duration needs a unit unless it is 0",
	doc:  []string{"//hotkey:cache key=user:{ID} window=10"},
	errs: []string{`user.go:3:30: window: "10" is not a duration; use a form like 30s, 5m or 1h`},
}, {
	name: "a version is a whole number from 1",
	doc:  []string{"//hotkey:cache key=user:{ID} version=0 ttl=1m"},
	errs: []string{`user.go:3:30: version: "0" is not a version; use a whole number from 1 to 9999, as in version=2`},
}, {
	name: "a version is written without a v",
	doc:  []string{"//hotkey:cache key=user:{ID}", "//hotkey:cache version=v2"},
	errs: []string{`user.go:4:16: version: "v2" is not a version; use a whole number from 1 to 9999, as in version=2`},
}, {
	name: "a rate must be a finite number",
	doc:  []string{"//hotkey:cache key=user:{ID} hot_qps=fast warm_qps=NaN"},
	errs: []string{
		`user.go:3:30: hot_qps: "fast" is not a number; use a form like 3000 or 2.5`,
		`user.go:3:43: warm_qps: "NaN" is not a number; use a form like 3000 or 2.5`,
	},
}, {
	name: "a count must be a whole number that fits an int",
	doc:  []string{"//hotkey:cache key=user:{ID} top_n=2.5 local_size=99999999999999999999"},
	errs: []string{
		`user.go:3:30: top_n: "2.5" is not a whole number; use a form like 10 or 200`,
		`user.go:3:40: local_size: 99999999999999999999 is out of range; use a form like 10 or 200`,
	},
}, {
	name: "null_ttl is a duration, with a unit",
	doc:  []string{"//hotkey:cache key=user:{ID} null_ttl=60"},
	errs: []string{`user.go:3:30: null_ttl: "60" is not a duration; use a form like 30s, 5m or 1h`},
}, {
	name: "a negative null_ttl is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID} null_ttl=-1m"},
	errs: []string{`user.go:3:30: null_ttl: must not be negative (0 disables it), got -1m0s`},
}, {
	name: "a null_ttl finer than Redis expiries is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID} null_ttl=500us"},
	errs: []string{`user.go:3:30: null_ttl: Redis expiries have millisecond resolution, got 500µs`},
}, {
	name: "a jitter must be a plain decimal fraction or percentage",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=lots"},
	errs: []string{`user.go:3:30: jitter: "lots" is not a fraction; use a form like 0.05 or 5%`},
}, {
	name: "a jitter takes no exponent",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=5e-2"},
	errs: []string{`user.go:3:30: jitter: "5e-2" is not a fraction; use a form like 0.05 or 5%`},
}, {
	name: "a jitter has at most one decimal point",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=0.0.5"},
	errs: []string{`user.go:3:30: jitter: "0.0.5" is not a fraction; use a form like 0.05 or 5%`},
}, {
	name: "a jitter of NaN is not a fraction",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=NaN"},
	errs: []string{`user.go:3:30: jitter: "NaN" is not a fraction; use a form like 0.05 or 5%`},
}, {
	name: "a percent sign is written once",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=5%%"},
	errs: []string{`user.go:3:30: jitter: "5%%" is not a fraction; use a form like 0.05 or 5%`},
}, {
	name: "a jitter of 1 or more is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=1"},
	errs: []string{`user.go:3:30: jitter: must be a fraction from 0 up to but not including 1, got 1`},
}, {
	name: "a percentage of 100 or more is rejected by the runtime as its fraction",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=150%"},
	errs: []string{`user.go:3:30: jitter: must be a fraction from 0 up to but not including 1, got 1.5`},
}, {
	name: "a negative jitter is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=-5%"},
	errs: []string{`user.go:3:30: jitter: must be a fraction from 0 up to but not including 1, got -0.05`},
}, {
	name: "a jitter too large for a float64 is out of range",
	doc:  []string{"//hotkey:cache key=user:{ID} jitter=1" + strings.Repeat("0", 400)},
	errs: []string{`user.go:3:30: jitter: 1` + strings.Repeat("0", 400) + ` is out of range; use a form like 0.05 or 5%`},
}, {
	name: "rebuild_lock lists its forms when a value is far from all of them",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock=yes"},
	errs: []string{`user.go:3:30: rebuild_lock: "yes" is not on, off, true or false; use one of those`},
}, {
	name: "rebuild_lock suggests the form a value is a slip away from",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock=of"},
	errs: []string{`user.go:3:30: rebuild_lock: "of" is not on, off, true or false; did you mean "off"?`},
}, {
	name: "rebuild_lock is written in lower case",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock=ON"},
	errs: []string{`user.go:3:30: rebuild_lock: "ON" is not on, off, true or false; did you mean "on"?`},
}, {
	name: "rebuild_lock without a value asks for on or off",
	doc:  []string{"//hotkey:cache key=user:{ID} rebuild_lock"},
	errs: []string{`user.go:3:30: rebuild_lock: no value; write rebuild_lock=VALUE with a form like on or off`},
}, {
	name: "aggregate is a switch, like rebuild_lock",
	doc:  []string{"//hotkey:cache key=user:{ID} aggregate=yes"},
	errs: []string{`user.go:3:30: aggregate: "yes" is not on, off, true or false; use one of those`},
}, {
	name: "cluster_hot_qps is a number",
	doc:  []string{"//hotkey:cache key=user:{ID} cluster_hot_qps=lots"},
	errs: []string{`user.go:3:30: cluster_hot_qps: "lots" is not a number; use a form like 3000 or 2.5`},
}, {
	name: "a negative cluster_hot_qps is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID} aggregate=on cluster_hot_qps=-1"},
	errs: []string{`user.go:3:43: cluster_hot_qps: must not be negative (0 means hot_qps), got -1`},
}, {
	name: "degrade suggests the closest mode",
	doc:  []string{"//hotkey:cache key=user:{ID} degrade=laoder"},
	errs: []string{`user.go:3:30: degrade: "laoder" is not off or loader; did you mean "loader"?`},
}, {
	name: "invalidate suggests the closest mode",
	doc:  []string{"//hotkey:cache key=user:{ID} invalidate=trackng"},
	errs: []string{`user.go:3:30: invalidate: "trackng" is not tracking, pubsub, pubsub-keys or off; did you mean "tracking"?`},
}, {
	name: "degrade lists its modes when a value is far from both",
	doc:  []string{"//hotkey:cache key=user:{ID} degrade=stale"},
	errs: []string{`user.go:3:30: degrade: "stale" is not off or loader; use one of those`},
}, {
	name: "an empty degrade asks for a mode",
	doc:  []string{`//hotkey:cache key=user:{ID} degrade=""`},
	errs: []string{`user.go:3:30: degrade: empty value; use a form like off or loader`},
}, {
	name: "a size in decimal kilobytes is refused, so 16KB is never misread",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=16KB max_value_bytes_hard=1mib"},
	errs: []string{
		`user.go:3:30: max_value_bytes: "16KB" has unknown unit "KB"; use B, KiB or MiB (1024-based), as in 16KiB`,
		`user.go:3:51: max_value_bytes_hard: "1mib" has unknown unit "mib"; use B, KiB or MiB (1024-based), as in 16KiB`,
	},
}, {
	name: "a size is a whole number, with or without its unit",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=1.5MiB max_value_bytes_hard=KiB"},
	errs: []string{
		`user.go:3:30: max_value_bytes: "1.5MiB" is not a size; use a form like 16384, 16KiB or 1MiB`,
		`user.go:3:53: max_value_bytes_hard: "KiB" is not a size; use a form like 16384, 16KiB or 1MiB`,
	},
}, {
	name: "a size must fit an int, before and after its unit",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=99999999999999999999 max_value_bytes_hard=9000000000000MiB"},
	errs: []string{
		`user.go:3:30: max_value_bytes: 99999999999999999999 is out of range; use a form like 16384, 16KiB or 1MiB`,
		`user.go:3:67: max_value_bytes_hard: 9000000000000MiB is out of range; use a form like 16384, 16KiB or 1MiB`,
	},
}, {
	name: "a negative max_value_bytes is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=-1"},
	errs: []string{`user.go:3:30: max_value_bytes: must not be negative (0 disables the warning), got -1`},
}, {
	name: "a negative max_value_bytes_hard is rejected by the runtime in bytes",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes_hard=-1KiB"},
	errs: []string{`user.go:3:30: max_value_bytes_hard: must not be negative (0 disables the limit), got -1024`},
}, {
	name: "a name must become an exported Go identifier",
	doc:  []string{"//hotkey:cache key=user:{ID} name=_user"},
	errs: []string{`user.go:3:30: name: "_user" cannot name generated methods; use a Go identifier starting with a letter, like Account`},
}, {
	name: "an argument without = is reported",
	doc:  []string{"//hotkey:cache key=user:{ID} lazy"},
	errs: []string{`user.go:3:30: argument "lazy" is not name=value; write options like ttl=30m`},
}, {
	name: "a known option without = asks for its value",
	doc:  []string{"//hotkey:cache key=user:{ID} ttl"},
	errs: []string{`user.go:3:30: ttl: no value; write ttl=VALUE with a form like 30s, 5m or 1h`},
}, {
	name: "an argument without a name is reported",
	doc:  []string{"//hotkey:cache key=user:{ID} =5"},
	errs: []string{`user.go:3:30: argument "=5" has no option name; write options like ttl=30m`},
}, {
	name: "an empty value, bare or quoted, is reported",
	doc:  []string{`//hotkey:cache key="" ttl=`},
	errs: []string{
		`user.go:3:16: key: empty value; use a form like user:{ID}`,
		`user.go:3:23: ttl: empty value; use a form like 30s, 5m or 1h`,
	},
}, {
	name: "an unterminated quoted string is reported",
	doc:  []string{`//hotkey:cache ttl=1m key="user {ID}`},
	errs: []string{`user.go:3:23: key: "user {ID} is not a valid Go quoted string; end it with '"' and escape '"' and '\' inside with '\'`},
}, {
	name: "a quoted string with a bad escape is reported",
	doc:  []string{`//hotkey:cache key="user\q{ID}"`},
	errs: []string{`user.go:3:16: key: "user\q{ID}" is not a valid Go quoted string; end it with '"' and escape '"' and '\' inside with '\'`},
}, {
	name: "a quote inside a bare value is reported",
	doc:  []string{`//hotkey:cache key=user"{ID}"`},
	errs: []string{`user.go:3:16: key: stray '"' in value; quote the whole value, as in key="user {Org}:{ID}"`},
}, {
	name: "two fields with no punctuation between them could share a key",
	doc:  []string{"//hotkey:cache key=t:{A}x{B}"},
	errs: []string{`user.go:3:26: key: {B} follows another field with no punctuation between them, so two entities could share one key; separate them, as in {A}:{B}`},
}, {
	name: "an unclosed field is reported at its brace",
	doc:  []string{"//hotkey:cache key=user:{ID"},
	errs: []string{`user.go:3:25: key: unclosed "{"; close the field with "}", as in {ID}`},
}, {
	name: "a field opened inside a field is unclosed",
	doc:  []string{"//hotkey:cache key={A{B}}"},
	errs: []string{`user.go:3:20: key: unclosed "{"; close the field with "}", as in {ID}`},
}, {
	name: "an unmatched closing brace is reported at the brace",
	doc:  []string{"//hotkey:cache key=user:}"},
	errs: []string{`user.go:3:25: key: unmatched "}"; remove it or open a field with "{", as in {ID}`},
}, {
	name: "an empty field is reported at its brace",
	doc:  []string{"//hotkey:cache key=user:{}"},
	errs: []string{`user.go:3:25: key: {} does not name a field; write a Go field name of the struct, as in {ID}`},
}, {
	name: "a field must be a Go identifier",
	doc:  []string{"//hotkey:cache key=user:{Org.ID}"},
	errs: []string{`user.go:3:25: key: {Org.ID} does not name a field; write a Go field name of the struct, as in {ID}`},
}, {
	name: "a brace inside a quoted key is reported at its column in the source",
	doc:  []string{`//hotkey:cache key="a\tb {ID"`},
	errs: []string{`user.go:3:26: key: unclosed "{"; close the field with "}", as in {ID}`},
}, {
	name: "a key without a field would share one Redis key among all values",
	doc:  []string{"//hotkey:cache key=users"},
	errs: []string{`user.go:3:16: key: "users" has no {Field}, so every value would share one Redis key; include the identifying field, as in user:{ID}`},
}, {
	name: "warm_qps above a written hot_qps is rejected by the runtime at warm_qps",
	doc:  []string{"//hotkey:cache key=user:{ID} hot_qps=100 warm_qps=400"},
	errs: []string{`user.go:3:42: warm_qps: 400 is above hot_qps 100; a key must cool below the promotion rate to be demoted: lower warm_qps, or leave it out to follow hot_qps / 6`},
}, {
	name: "top_n above a written local_size is rejected by the runtime at top_n",
	doc:  []string{"//hotkey:cache key=user:{ID} local_size=5 top_n=30"},
	errs: []string{`user.go:3:43: top_n: 30 exceeds local_size 5; every hot key needs a local slot: raise local_size, or lower top_n`},
}, {
	name: "refresh not shorter than local_ttl is rejected by the runtime at refresh",
	doc:  []string{"//hotkey:cache key=user:{ID} refresh=2h local_ttl=1h"},
	errs: []string{`user.go:3:30: refresh: 2h0m0s must be shorter than local_ttl 1h0m0s, or local copies expire before they are refreshed`},
}, {
	name: "a hard size limit below the warning size is a contradiction",
	doc:  []string{"//hotkey:cache key=user:{ID} max_value_bytes=64KiB max_value_bytes_hard=16KiB"},
	errs: []string{`user.go:3:52: max_value_bytes_hard: 16384 is below max_value_bytes 65536: writes would be refused before they were ever warned about; raise it, or lower max_value_bytes`},
}, {
	name: "cluster_hot_qps without aggregate=on is a contradiction",
	doc:  []string{"//hotkey:cache key=user:{ID} cluster_hot_qps=9000"},
	errs: []string{`user.go:3:30: cluster_hot_qps: applies only to cluster-wide detection, which is off; add aggregate=on (WithAggregate(true)), or remove cluster_hot_qps`},
}, {
	name: "every contradiction is reported, each at its option",
	doc:  []string{"//hotkey:cache key=user:{ID} top_n=500 local_size=20 refresh=2h local_ttl=1h"},
	errs: []string{
		`user.go:3:30: top_n: 500 exceeds local_size 20; every hot key needs a local slot: raise local_size, or lower top_n`,
		`user.go:3:54: refresh: 2h0m0s must be shorter than local_ttl 1h0m0s, or local copies expire before they are refreshed`,
	},
}, {
	name: "a typo in one option hides neither a contradiction nor a template error",
	doc:  []string{"//hotkey:cache key={ID} ttl=3x hot_qps=10 warm_qps=20"},
	errs: []string{
		`user.go:3:16: key: "{ID}" must start with a literal prefix ending in punctuation, as in user:{ID}: without one, a caller's value could name any Redis key, another entity's included`,
		`user.go:3:25: ttl: "3x" is not a duration; use a form like 30s, 5m or 1h`,
		`user.go:3:43: warm_qps: 20 is above hot_qps 10; a key must cool below the promotion rate to be demoted: lower warm_qps, or leave it out to follow hot_qps / 6`,
	},
}, {
	name: "a key made of a field alone has no prefix of its own",
	doc:  []string{"//hotkey:cache key={Name}:tail"},
	errs: []string{`user.go:3:16: key: "{Name}:tail" must start with a literal prefix ending in punctuation, as in user:{Name}: without one, a caller's value could name any Redis key, another entity's included`},
}, {
	name: "a prefix must end in punctuation to keep a field's value out of it",
	doc:  []string{"//hotkey:cache key=user{Name}"},
	errs: []string{`user.go:3:16: key: "user{Name}" must start with a literal prefix ending in punctuation, as in user:{Name}: without one, a caller's value could name any Redis key, another entity's included`},
}, {
	name: "a negative duration is rejected by the runtime",
	doc:  []string{"//hotkey:cache key=user:{ID}", "//hotkey:cache window=-1s"},
	errs: []string{`user.go:4:16: window: must be a positive duration, got -1s`},
}, {
	name: "a space after // makes a malformed directive",
	doc:  []string{"// hotkey:cache key=user:{ID}"},
	errs: []string{`user.go:3:1: malformed directive: remove the space in "// hotkey:cache"`},
}, {
	name: "a tab after // makes a malformed directive",
	doc:  []string{"//\thotkey:cache key=user:{ID}"},
	errs: []string{`user.go:3:1: malformed directive: remove the space in "//\thotkey:cache"`},
}, {
	name: "a malformed line still counts when a well-formed one lacks the key",
	doc:  []string{"//hotkey:cache ttl=1m", "//  hotkey:cache key=user:{ID}"},
	errs: []string{`user.go:4:1: malformed directive: remove the space in "//  hotkey:cache"`},
}, {
	name: "a misspelt directive suggests //hotkey:cache",
	doc:  []string{"//hotkey:cahce key=user:{ID}"},
	errs: []string{`user.go:3:1: unknown directive //hotkey:cahce; did you mean //hotkey:cache?`},
}, {
	name: "an unknown directive in our namespace is reported",
	doc:  []string{"//hotkey:store key=user:{ID}"},
	errs: []string{`user.go:3:1: unknown directive //hotkey:store; the only directive is //hotkey:cache`},
}, {
	name: "all problems are collected and sorted by position",
	doc: []string{
		"//hotkey:cache ttl=30x hot_qsp=1",
		"//hotkey:cache top_n=x ttl=1m",
	},
	errs: []string{
		`user.go:3:1: //hotkey:cache needs a key; add one like key=user:{ID}`,
		`user.go:3:16: ttl: "30x" is not a duration; use a form like 30s, 5m or 1h`,
		`user.go:3:24: unknown option "hot_qsp"; did you mean "hot_qps"?`,
		`user.go:4:16: top_n: "x" is not a whole number; use a form like 10 or 200`,
		`user.go:4:24: duplicate option "ttl", first set at 3:16; remove one`,
	},
}, {
	name: "combinations are not judged while a value fails to parse",
	doc:  []string{"//hotkey:cache key=user:{ID} hot_qps=x warm_qps=4000"},
	errs: []string{`user.go:3:30: hot_qps: "x" is not a number; use a form like 3000 or 2.5`},
}}

func TestParseReportsEveryProblemAtItsArgument(t *testing.T) {
	for _, tt := range malformed {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDoc(t, tt.doc...)
			if got := errorLines(err); !reflect.DeepEqual(got, tt.errs) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.errs, "\n"))
			}
			var list ErrorList
			errors.As(err, &list)
			for _, e := range list {
				if e.Rule == "" {
					t.Errorf("%v names no rule", e)
				}
			}
		})
	}
}

func TestParseWithoutDirectiveReturnsNothing(t *testing.T) {
	spec, err := parseDoc(t, "// User is not cached.", "//go:generate stringer -type User")
	if spec != nil || err != nil {
		t.Errorf("Parse = %v, %v; want nil, nil", spec, err)
	}
	if spec, err := Parse(token.NewFileSet(), nil, nil); spec != nil || err != nil {
		t.Errorf("Parse(nil groups) = %v, %v; want nil, nil", spec, err)
	}
}

func TestParseReadsTheDocOfATypeInAGroup(t *testing.T) {
	src := `package p

// Cached types.
type (
	// Order is cached.
	//hotkey:cache key=order:{ID} top_n=5
	Order struct{ ID int64 }

	Invoice struct{ ID int64 }
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "order.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	decl := f.Decls[0].(*ast.GenDecl)
	spec, err := Parse(fset, decl.Doc, decl.Specs[0].(*ast.TypeSpec).Doc)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Key.Raw != "order:{ID}" || spec.TopN != 5 || spec.Pos.String() != "order.go:6:2" {
		t.Errorf("Spec = key %q, top_n %d at %v; want order:{ID}, 5 at order.go:6:2", spec.Key.Raw, spec.TopN, spec.Pos)
	}
	if spec, err := Parse(fset, decl.Doc, decl.Specs[1].(*ast.TypeSpec).Doc); spec != nil || err != nil {
		t.Errorf("Invoice: Parse = %v, %v; want nil, nil", spec, err)
	}
}

func TestParseReadsAGroupPassedTwiceOnce(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "user.go", "package p\n\n//hotkey:cache key=user:{ID}\ntype User struct{ ID int64 }\n", parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Decls[0].(*ast.GenDecl).Doc
	if _, err := Parse(fset, doc, doc); err != nil {
		t.Errorf("Parse(doc, doc): %v", err)
	}
}

func TestSpecDefaultsComeFromTheRuntime(t *testing.T) {
	spec, err := ParseLine(token.Position{Filename: "user.go", Line: 1, Column: 1}, "//hotkey:cache key=user:{ID}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := spec.Config, runtime.DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("Config() = %+v\nwant runtime.DefaultConfig() = %+v", got, want)
	}
	if spec.HotQPS != runtime.DefaultHotQPS || spec.LocalTTL != runtime.DefaultLocalTTL || spec.RecorderSize != runtime.DefaultRecorderSize ||
		spec.NullTTL != runtime.DefaultNullTTL || spec.Jitter != runtime.DefaultJitter || spec.Degrade != runtime.DegradeOff ||
		spec.MaxValueBytes != runtime.DefaultMaxValueBytes {
		t.Errorf("Spec fields differ from the runtime's defaults: %+v", spec)
	}
}

func TestSpecConfigAppliesEverySetOption(t *testing.T) {
	spec, err := ParseLine(token.Position{Line: 1, Column: 1},
		"//hotkey:cache key=user:{ID} ttl=1m hot_qps=10 warm_qps=5 top_n=2 window=1s promote_every=1s demote_every=2s "+
			"local_size=3 local_ttl=1h refresh=30m refresh_failures=4 recorder_size=50 inactive_after=1m name=Account "+
			"null_ttl=0 jitter=20% rebuild_lock=on degrade=loader stale_reads=off max_value_bytes=1MiB max_value_bytes_hard=4MiB invalidate=pubsub "+
			"aggregate=on cluster_hot_qps=20 codec=reflect changes=on sync_every=1s sync_batch=100 sync_lease=30s sync_ttl=2h "+
			"bloom=on bloom_items=5000 bloom_fp=0.5% version=3")
	if err != nil {
		t.Fatal(err)
	}
	// A collection's options, which the change buffer and the Bloom
	// filter exclude, on a line of their own.
	coll, err := ParseLine(token.Position{Line: 1, Column: 1}, "//hotkey:cache key=token:{UserID} layout=hash field={Token} expires=ExpiresAt")
	if err != nil {
		t.Fatal(err)
	}
	// The options an annotation writes are the runtime's own, so what
	// the runtime records as written is the same too.
	want := runtime.DefaultConfig()
	for _, o := range []runtime.Option{
		runtime.WithTTL(time.Minute), runtime.WithHotQPS(10), runtime.WithWarmQPS(5), runtime.WithTopN(2),
		runtime.WithWindow(time.Second), runtime.WithPromoteEvery(time.Second), runtime.WithDemoteEvery(2 * time.Second),
		runtime.WithLocalSize(3), runtime.WithLocalTTL(time.Hour), runtime.WithRefresh(30 * time.Minute), runtime.WithRefreshFailures(4),
		runtime.WithRecorderSize(50), runtime.WithInactiveAfter(time.Minute),
		runtime.WithNullTTL(0), runtime.WithJitter(0.2), runtime.WithRebuildLock(true), runtime.WithDegrade(runtime.DegradeLoader),
		runtime.WithStaleReads(false), runtime.WithMaxValueBytes(1 << 20), runtime.WithMaxValueBytesHard(4 << 20),
		runtime.WithInvalidate(runtime.InvalidatePubSub),
		runtime.WithAggregate(true), runtime.WithClusterHotQPS(20),
		runtime.WithChanges(true), runtime.WithSyncEvery(time.Second), runtime.WithSyncBatch(100),
		runtime.WithSyncLease(30 * time.Second), runtime.WithSyncTTL(2 * time.Hour),
		runtime.WithBloom(true), runtime.WithBloomItems(5000), runtime.WithBloomFP(0.005),
	} {
		o(&want)
	}
	if got := spec.Config; !reflect.DeepEqual(got, want) {
		t.Errorf("Config = %+v\nwant %+v", got, want)
	}
	if spec.Codec != CodecReflect {
		t.Errorf("Codec = %q, want %q", spec.Codec, CodecReflect)
	}
	if spec.Version != 3 || coll.Version != 1 {
		t.Errorf("Version = %d and %d, want 3 and the default 1", spec.Version, coll.Version)
	}
	if coll.Layout != runtime.LayoutHash || coll.Field != "Token" || coll.Expires != "ExpiresAt" {
		t.Errorf("Layout, Field, Expires = %q, %q, %q; want hash, Token, ExpiresAt", coll.Layout, coll.Field, coll.Expires)
	}
	if set := len(spec.Args) + len(coll.Args) - 1; set != len(options) { // key is on both lines
		t.Errorf("the test sets %d options, the registry has %d: set the new ones here", set, len(options))
	}
}

func TestParseLinePositionsFollowTheStart(t *testing.T) {
	start := token.Position{Filename: "x.go", Offset: 100, Line: 7, Column: 5}
	_, err := ParseLine(start, "//hotkey:cache key=x:{ID} ttl=bad")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(%v, *Error) failed", err)
	}
	want := token.Position{Filename: "x.go", Offset: 126, Line: 7, Column: 31}
	if e.Pos != want {
		t.Errorf("Pos = %+v, want %+v", e.Pos, want)
	}
	if spec, err := ParseLine(start, "// just prose"); spec != nil || err != nil {
		t.Errorf("ParseLine(prose) = %v, %v; want nil, nil", spec, err)
	}
}

func TestTemplatePartsCarryTheirSourcePositions(t *testing.T) {
	spec, err := ParseLine(token.Position{Filename: "t.go", Line: 2, Column: 1}, `//hotkey:cache key="org \"{Org}\":{ID}"`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range spec.Key.Parts {
		got = append(got, fmt.Sprintf("lit %q field %q at %d", p.Lit, p.Field, p.Pos.Column))
	}
	want := []string{
		`lit "org \"" field "" at 21`,
		`lit "" field "Org" at 27`,
		`lit "\":" field "" at 32`,
		`lit "" field "ID" at 35`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fields := spec.Key.Fields()
	if len(fields) != 2 || fields[0].Field != "Org" || fields[1].Field != "ID" {
		t.Errorf("Fields() = %+v, want Org then ID", fields)
	}
	if err := fields[1].Errorf(RuleFieldMissing, "User has no field %s", fields[1].Field); err.Error() != "t.go:2:35: User has no field ID" || err.Rule != RuleFieldMissing {
		t.Errorf("Part.Errorf = %q, rule %q", err, err.Rule)
	}
}

func TestErrorListSupportsErrorsAs(t *testing.T) {
	_, err := parseDoc(t, "//hotkey:cache ttl=x")
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("errors.As(ErrorList) = %v, want two errors", list)
	}
	var first *Error
	if !errors.As(err, &first) || first != list[0] {
		t.Errorf("errors.As(*Error) = %v, want the first error %v", first, list[0])
	}
}

// notSetting are the fields of Config that hold no setting: the record
// of what was written, what the With functions were given, the tests'
// seams.
var notSetting = map[string]bool{"Written": true, "Given": true, "Test": true}

// sameSettings reports whether a and b hold the same value in every
// setting: the runtime's record of which were written is compared where a
// test builds its expectation from runtime options.
func sameSettings(a, b runtime.Config) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if notSetting[f.Name] || !f.IsExported() {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}

func TestMisspeltDirectivesAreRecognised(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"//hotkeys:cache key=user:{ID}", true},
		{"//HotKey:cache key=user:{ID}", true},
		{"//hot-key:cache", true},
		{"//hotkye:cache", true},
		{"// hotkeys:cache key=user:{ID}", true},
		{"//hotkey-cache key=user:{ID}", true},
		{"//hotkeycache", true},
		{"// hotkey-cache key=user:{ID}", true},  // as gofmt writes it
		{"//hotkey:cache key=user:{ID}", false},  // ours: Parse reads it
		{"//hotkey:cahce key=user:{ID}", false},  // ours: Parse reports it
		{"// hotkey:cache key=user:{ID}", false}, // ours: Parse reports the space
		{"// hotkeys are detected per instance", false},
		{"// hotkeycache is prose after a space", false},
		{"//go:generate go tool hotkeygen", false},
		{"//lint:ignore U1000 generated", false},
		{"//nolint:errcheck", false},
		{"/* hotkeys:cache */", false},
		{"//\t//hotkey:cache key=user:{ID} quoted in a doc comment", false},
		{"// //hotkeys:cache quoted in prose", false},
		{"//" + strings.Repeat("hotkey", 20) + ":cache", false},
	}
	for _, tt := range tests {
		got, ok := Misspelt(tt.text)
		if ok != tt.want || ok && got != "//hotkey:cache" {
			t.Errorf("Misspelt(%q) = %q, %v; want %v", tt.text, got, ok, tt.want)
		}
	}
}
