package generator

import (
	"fmt"
	"go/types"
	"slices"
)

// The packages generated files lean on, besides the standard library's:
// the runtime and the Redis client always; msgpack and the runtime's wire
// encoding when an entity has a generated codec.
const (
	runtimePath = "github.com/hotkeygen/hotkeygen/runtime"
	redisPath   = "github.com/redis/go-redis/v9"
	msgpackPath = "github.com/vmihailenco/msgpack/v5"
	wirePath    = "github.com/hotkeygen/hotkeygen/runtime/wire"
)

// importName is the name a package is imported under.
type importName struct {
	Name string
	// Renamed is set when Name is not the package's own name, so the
	// import needs it written.
	Renamed bool
}

// importNames chooses the name of every package the file may import: its
// own name, unless a package-level declaration, a function the file
// declares or an earlier import has it, then the name with the first free
// number appended.
func importNames(self *types.Package, pkg *pkgModel) map[string]importName {
	// The fixed imports, every package the emitters write a name of, come
	// first, so they keep their names.
	fixed := []string{"context", "errors", "iter", "maps", "slices", "strconv", "time", runtimePath, redisPath}
	paths := map[string]string{runtimePath: "runtime", redisPath: "redis"} // path → package name
	addPkg := func(p *types.Package) {
		if p != nil && p != self {
			paths[p.Path()] = p.Name()
		}
	}
	for _, e := range pkg.Entities {
		for _, p := range e.Params {
			walkPackages(p.Type, addPkg)
		}
		if e.Collection != nil {
			walkPackages(e.Collection.Field.Type, addPkg)
		}
	}
	for _, e := range pkg.Entities {
		if e.Codec != nil {
			paths[msgpackPath] = "msgpack"
			paths[wirePath] = "wire"
			for _, f := range e.Codec.Fields {
				walkPackages(f.Type, addPkg)
			}
		}
	}
	// A codec function names the types of its struct's fields, and the
	// nested structs, another package's, may hold types of packages the
	// entities' fields never name.
	for _, fn := range pkg.Codecs {
		walkPackages(fn.Type, addPkg)
		for _, f := range fn.Plan.Fields {
			walkPackages(f.Type, addPkg)
		}
	}
	for _, g := range pkg.Guards {
		walkPackages(g.Underlying(), addPkg)
	}
	for _, c := range pkg.Clones {
		walkPackages(c.Type, addPkg)
	}
	var others []string
	for path := range paths {
		if !slices.Contains(fixed, path) {
			others = append(others, path)
		}
	}
	slices.Sort(others)
	sorted := append(fixed, others...)
	taken := map[string]bool{}
	for _, n := range self.Scope().Names() {
		taken[n] = true
	}
	// The generated file's own unexported functions too.
	for _, c := range pkg.Clones {
		taken[c.Name] = true
	}
	for _, fn := range pkg.Codecs {
		taken[fn.Append()], taken[fn.Read()] = true, true
	}
	names := map[string]importName{}
	for _, path := range sorted {
		base := paths[path]
		if base == "" {
			base = path // a standard library package: its name is its path
		}
		name := base
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s%d", base, i)
		}
		taken[name] = true
		names[path] = importName{Name: name, Renamed: name != base}
	}
	return names
}

// walkPackages calls f with the package of every named type t mentions.
func walkPackages(t types.Type, f func(*types.Package)) {
	seen := map[types.Type]bool{}
	var walk func(types.Type)
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Basic:
			if t.Kind() == types.UnsafePointer {
				f(types.Unsafe)
			}
		case *types.Named:
			f(t.Obj().Pkg())
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		case *types.Alias:
			f(t.Obj().Pkg())
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Map:
			walk(t.Key())
			walk(t.Elem())
		case *types.Chan:
			walk(t.Elem())
		case *types.Struct:
			for i := range t.NumFields() {
				walk(t.Field(i).Type())
			}
		case *types.Signature:
			walk(t.Params())
			walk(t.Results())
		case *types.Tuple:
			for i := range t.Len() {
				walk(t.At(i).Type())
			}
		case *types.Interface:
			for i := range t.NumEmbeddeds() {
				walk(t.EmbeddedType(i))
			}
			for i := range t.NumExplicitMethods() {
				walk(t.ExplicitMethod(i).Type())
			}
		}
	}
	walk(t)
}
