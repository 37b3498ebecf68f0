package runtime_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// The public API is what users of generated repositories use and nothing
// more: the engine lives in runtime/internal/engine, the settings in
// runtime/internal/config, the live page in runtime/livepage; no seam of
// the tests (a clock, a hook) is here. A name added here is a promise to keep; this test
// makes each one a decision.
func TestPublicAPI(t *testing.T) {
	want := []string{
		"const DefaultHotQPS", "const DegradeOff", "const HistoryLen", "const InvalidateTracking", "const WarmRatio",
		"var ErrNotFound", // ErrDecode, ErrClosed, ErrUnavailable, ErrValueTooLarge
		"func AppendKeyString",
		"type Cache", "func MustNew", "func New",
		"method Cache.Close", "method Cache.Del", "method Cache.Get", "method Cache.GetMany",
		"method Cache.History", "method Cache.Set", "method Cache.Stats", "method Cache.View",
		"method Cache.MarkChanged", "method Cache.WarmBloom",
		"type ChangeStats", "type BloomStats",
		"const LayoutString", "type CollectionGlue", "type Collection", "func NewCollection", "func MustNewCollection", "func WithCollectionLoader",
		"method Collection.Close", "method Collection.Del", "method Collection.HDel", "method Collection.HGet", "method Collection.HGetAll",
		"method Collection.HGetAllMany", "method Collection.HSet", "method Collection.History", "method Collection.Stats",
		"type Config", "func DefaultConfig", // and Config's methods: an alias, as are Glue, Stats and the types of errors
		"type ConfigError",
		"type Glue",
		"type HotKey",
		"type Option",
		"type ReadOutcomes",
		"func WithAggregate", "func WithAggregateTop", "func WithAutoPipeline", "func WithBatchLoader", "func WithClusterHotQPS",
		"func WithDegrade", "func WithDegradeLimit", "func WithDemoteEvery", "func WithEntity", "func WithHotQPS",
		"func WithInactiveAfter", "func WithInvalidate", "func WithJitter", "func WithLoader", "func WithLocalSize",
		"func WithLocalTTL", "func WithLogger", "func WithMaxValueBytes", "func WithMaxValueBytesHard", "func WithMonitorEvery",
		"func WithNullTTL", "func WithPromoteEvery", "func WithRebuildLock", "func WithRebuildLockTTL", "func WithRecorderSize",
		"func WithRefresh", "func WithRefreshFailures", "func WithStaleReads", "func WithTTL", "func WithTopN", "func WithWarmQPS", "func WithWindow",
		"func WithChanges", "func WithSyncEvery", "func WithSyncBatch", "func WithSyncLease", "func WithSyncTTL", "func WithSyncHook",
		"func WithBloom", "func WithBloomItems", "func WithBloomFP",
		"type Sample",
		"type Stats",
	}
	got := publicAPI(t, ".")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		var added, gone []string
		for _, n := range got {
			if !slices.Contains(want, n) {
				added = append(added, n)
			}
		}
		for _, n := range want {
			if !slices.Contains(got, n) {
				gone = append(gone, n)
			}
		}
		t.Errorf("the public API changed:\nadded %q\ngone %q\nmake internal what users do not call, or update this list", added, gone)
	}
}

// publicAPI lists the exported names the package in dir declares, as go
// doc shows them: each constant or variable group by its first name.
func publicAPI(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkg, err := build.ImportDir(dir, 0) // the default build's files: no benchmark's tag
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/hotkeygen/hotkeygen/runtime")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	values := func(kind string, vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, kind+" "+v.Names[0])
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			names = append(names, "func "+f.Name)
		}
	}
	values("const", p.Consts)
	values("var", p.Vars)
	funcs(p.Funcs)
	for _, ty := range p.Types {
		names = append(names, "type "+ty.Name)
		values("const", ty.Consts)
		values("var", ty.Vars)
		funcs(ty.Funcs)
		for _, m := range ty.Methods {
			names = append(names, "method "+ty.Name+"."+m.Name)
		}
	}
	slices.Sort(names)
	return names
}
