package generator

import (
	"cmp"
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// pkgModel is everything generated for one Go package: the model the
// emitter renders, without a trace of go/ast.
type pkgModel struct {
	Path   string // import path, so references to it stay unqualified
	Name   string
	Output string // the generated file's path
	// Entities are the annotated structs, sorted by type name.
	Entities []*entity
	// Clones are the deep-copy functions, sorted by name: one per entity
	// and one per named struct type reached that needs more than a copy.
	Clones []*cloneFunc
	// Guards are the package's own types whose shape the clone functions
	// rely on, sorted by name; changing one breaks the build until the
	// code is generated again.
	Guards []*types.Named
	// Imports names every package the file may import, by path, chosen so
	// that none clashes with a package-level name or another import.
	Imports map[string]importName
	// Notes are what -v reports: parts of values copied shallowly, and
	// encoded by reflection.
	Notes []string
}

// importName is the name a package is imported under.
type importName struct {
	Name string
	// Renamed is set when Name is not the package's own name, so the
	// import needs it written.
	Renamed bool
}

// entity is one annotated struct type.
type entity struct {
	Type *types.Named // the struct
	// Name is the type's name, or the name= override, with an upper-case
	// first letter; it names the generated API: NameRepo, GetName, NameKey.
	Name string
	// Template is the key template as written, for doc comments.
	Template string
	Key      []keyPart
	// Params are the key fields, in order of first appearance in the
	// template; a field used twice is one parameter.
	Params []*param
	// ManyParam names the parameter of GetMany and of the batch loader,
	// which holds many keys ("ids").
	ManyParam string
	Options   []option
	// Changes and Bloom say the annotation turned the change buffer and
	// the Bloom filter on, which add methods (emit_changes.go).
	Changes, Bloom bool
	Clone          *cloneFunc
	// Codec is the generated msgpack codec; nil leaves the struct to
	// msgpack's reflection.
	Codec *codecPlan
	// codecNotes say, for -v, what the codec leaves to reflection.
	codecNotes []string
	// Collection is set for layout=hash (collection.go).
	Collection *collection
}

// keyPart is literal key text or a parameter.
type keyPart struct {
	Lit   string
	Param *param
}

// keyKind says how a key field is appended to the key.
type keyKind int

const (
	keyString keyKind = iota // append(b, s...)
	keyInt                   // strconv.AppendInt
	keyUint                  // strconv.AppendUint
)

// param is a key field and the parameter that carries it.
type param struct {
	Name  string         // "tenant"
	Field string         // "Tenant"
	Type  types.Type     // the field's type as declared: named types are kept
	Pos   token.Position // the field's first appearance in the template
	Kind  keyKind
	// Exact reports that Type is the kind's own type (string, int64,
	// uint64), so the key code needs no conversion.
	Exact bool
}

// Repo, Ctor and the others name an entity's generated declarations.
// KeyName is the key function of a single-field key, and the key struct of
// a composite one.
func (e *entity) Repo() string     { return e.Name + "Repo" }
func (e *entity) Ctor() string     { return "New" + e.Name + "Repo" }
func (e *entity) MustCtor() string { return "MustNew" + e.Name + "Repo" }
func (e *entity) KeyName() string  { return e.Name + "Key" }

// Get, GetMany and the loader options are named after the entity, the
// batch ones after many of it (see manyName): GetUser, GetUsers,
// WithUserLoader, WithUsersLoader.
func (e *entity) Get() string         { return "Get" + e.Name }
func (e *entity) GetMany() string     { return "Get" + manyName(e.Name) }
func (e *entity) Loader() string      { return "With" + e.Name + "Loader" }
func (e *entity) BatchLoader() string { return "With" + manyName(e.Name) + "Loader" }

// MarkChanged, SyncHook and WarmBloom name what changes=on and bloom=on
// add: MarkUserChanged, WithUserSyncHook, WarmUserBloom.
func (e *entity) MarkChanged() string { return "Mark" + e.Name + "Changed" }
func (e *entity) SyncHook() string    { return "With" + e.Name + "SyncHook" }
func (e *entity) WarmBloom() string   { return "Warm" + e.Name + "Bloom" }

// Composite reports that the key has more than one field, so the cache is
// keyed by a generated struct of them, KeyName; a single-field key is the
// field's own type, which is cheaper to hash and needs no declaration.
func (e *entity) Composite() bool { return len(e.Params) > 1 }

// generatedName is a package-level name the generated file declares, and
// what it names, for messages.
type generatedName struct{ Name, What string }

// generatedNames are an entity's package-level names, which must not be
// declared already.
func (e *entity) generatedNames() []generatedName {
	key := "key function"
	if e.Composite() {
		key = "key struct"
	}
	if e.Collection != nil {
		return []generatedName{
			{e.Repo(), "repository type"},
			{e.Ctor(), "constructor"},
			{e.MustCtor(), "MustNew constructor"},
			{e.KeyName(), key},
			{e.FieldName(), "field function"},
			{e.BatchLoader(), "collection loader option"},
		}
	}
	names := []generatedName{
		{e.Repo(), "repository type"},
		{e.Ctor(), "constructor"},
		{e.MustCtor(), "MustNew constructor"},
		{e.KeyName(), key},
		{e.Loader(), "loader option"},
		{e.BatchLoader(), "batch loader option"},
	}
	if e.Changes {
		names = append(names, generatedName{e.SyncHook(), "sync hook option"})
	}
	return names
}

// buildPackage turns targets, the annotated structs of in, into the
// package model. It returns nil when the package has no annotations.
func buildPackage(in *pkgInput, targets []target) (*pkgModel, ErrorList) {
	if len(targets) == 0 {
		return nil, nil
	}
	targets = slices.Clone(targets)
	slices.SortFunc(targets, func(a, b target) int { return cmp.Compare(a.Obj.Name(), b.Obj.Name()) })

	var errs ErrorList
	pkg := &pkgModel{Path: in.Path, Name: in.Name, Output: in.Output}
	cl := newCloner(in)
	type generatedAt struct {
		What string
		Pos  token.Position // the directive
	}
	byName := map[string]generatedAt{}
	for _, t := range targets {
		e, eerrs := buildEntity(in, t, cl)
		errs = append(errs, eerrs...)
		if e == nil {
			continue
		}
		for _, gen := range e.generatedNames() {
			name := gen.Name
			first, dup := byName[name]
			switch obj := in.Types.Scope().Lookup(name); {
			case obj != nil:
				errs.Add(t.Spec.Pos, fmt.Sprintf("the generated %s %s would clash with the %s %s declared at %s; rename one, or set name= to generate other names",
					gen.What, name, declKind(obj), name, posFrom(t.Spec.Pos, in.Fset.Position(obj.Pos()))))
				continue
			case !dup:
				byName[name] = generatedAt{gen.What, t.Spec.Pos}
				continue
			case name == e.Repo() && first.What == gen.What:
				errs.Add(t.Spec.Pos, fmt.Sprintf("two repositories would be named %s; the other one's directive is at %s; set name= on one of them",
					e.Repo(), posFrom(t.Spec.Pos, first.Pos)))
			default:
				errs.Add(t.Spec.Pos, fmt.Sprintf("the generated %s %s would clash with the %s of that name generated for the directive at %s; set name= on one of them",
					gen.What, name, first.What, posFrom(t.Spec.Pos, first.Pos)))
			}
			break // the other names most likely clash too: one error says it
		}
		pkg.Entities = append(pkg.Entities, e)
	}
	errs = append(errs, cl.errs...)
	if len(errs) > 0 {
		return nil, errs
	}
	pkg.Clones, pkg.Guards, pkg.Notes = cl.finish()
	for _, e := range pkg.Entities {
		pkg.Notes = append(pkg.Notes, e.codecNotes...)
	}
	slices.Sort(pkg.Notes)
	pkg.Notes = slices.Compact(pkg.Notes)
	pkg.Imports = importNames(in.Types, pkg)
	var names []string
	for _, imp := range pkg.Imports {
		names = append(names, imp.Name)
	}
	for _, e := range pkg.Entities {
		fields := make([]string, len(e.Params))
		for i, p := range e.Params {
			fields[i] = p.Field
		}
		if e.Collection != nil {
			fields = append(fields, e.Collection.Field.Field)
		}
		for i, name := range paramNames(fields, names) {
			if i == len(e.Params) {
				e.Collection.Field.Name = name
				break
			}
			e.Params[i].Name = name
		}
		fields = fields[:len(e.Params)]
		e.ManyParam = manyParamName(fields, names)
	}
	return pkg, nil
}

// declKind is the keyword that declares obj: "type", "func", "var" or
// "const".
func declKind(obj types.Object) string {
	switch obj.(type) {
	case *types.TypeName:
		return "type"
	case *types.Func:
		return "func"
	case *types.Const:
		return "const"
	}
	return "var"
}

// posFrom writes pos for a message reported at from: "line:col" in the
// same file, else "file.go:line:col". Files of a package share a
// directory, so the base name is enough, and the same on every machine.
func posFrom(from, pos token.Position) string {
	if pos.Filename == from.Filename {
		return fmt.Sprintf("%d:%d", pos.Line, pos.Column)
	}
	return fmt.Sprintf("%s:%d:%d", filepath.Base(pos.Filename), pos.Line, pos.Column)
}

// buildEntity models one annotated struct.
func buildEntity(in *pkgInput, t target, cl *cloner) (*entity, ErrorList) {
	named := t.Obj.Type().(*types.Named)
	st := named.Underlying().(*types.Struct)
	var errs ErrorList

	e := &entity{Type: named, Name: t.name(), Template: t.Spec.Key.Raw}
	e.Key, e.Params, errs = buildKey(in, st, t)
	col, cerrs := buildCollection(in, st, t, e.Params)
	errs = append(errs, cerrs...)
	e.Collection = col
	// A composite key becomes a struct of the key fields with a String
	// method; a field of that name would not compile.
	for _, p := range e.Params {
		if p.Field == "String" && e.Composite() {
			errs.Add(p.Pos, fmt.Sprintf("%s: a key of several fields cannot use a field named String: the fields become those of the generated struct %s, whose String method builds the Redis key; rename the field",
				t.Spec.Key.Raw, e.KeyName()))
		}
	}
	errs = append(errs, unencodable(in, named)...)

	opts, oerrs := options(t.entity(), t.Spec)
	errs = append(errs, oerrs...)
	e.Options = opts
	e.Changes, e.Bloom = t.Spec.Changes, t.Spec.Bloom

	if path := lockPath(named); path != "" {
		errs.Add(t.Spec.Pos, fmt.Sprintf("%s holds a lock (%s): every read returns a copy of the cached value, and a lock must not be copied", t.Obj.Name(), path))
		return nil, errs
	}
	e.Clone = cl.entity(named)
	e.Codec, e.codecNotes = planCodec(named, t.Spec, qualifier(nil))
	if len(errs) > 0 {
		return nil, errs
	}
	return e, nil
}

// buildKey models t's key template: its parts, and its fields as
// parameters in order of first appearance. targetOf calls it too, for a
// directive with other problems, so that one run reports them all.
func buildKey(in *pkgInput, st *types.Struct, t target) ([]keyPart, []*param, ErrorList) {
	var key []keyPart
	var params []*param
	var errs ErrorList
	byField := map[string]*param{}
	for _, part := range t.Spec.Key.Parts {
		if part.Field == "" {
			key = append(key, keyPart{Lit: part.Lit})
			continue
		}
		p, ok := byField[part.Field]
		if !ok {
			var perr *Error
			p, perr = keyParam(in, st, t, part.Field, part.Pos)
			if perr != nil {
				errs = append(errs, perr)
				continue
			}
			byField[part.Field] = p
			params = append(params, p)
		}
		key = append(key, keyPart{Param: p})
	}
	return key, params, errs
}

// keyParam checks that the struct has the field a template names, with a
// type a key can hold, stored in the value so that it survives the round
// trip through Redis.
func keyParam(in *pkgInput, st *types.Struct, t target, field string, pos token.Position) (*param, *Error) {
	raw, typeName := t.Spec.Key.Raw, t.Obj.Name()
	var f *types.Var
	var names []string
	for i := range st.NumFields() {
		names = append(names, st.Field(i).Name())
		if st.Field(i).Name() == field {
			f = st.Field(i)
		}
	}
	if f == nil {
		msg := fmt.Sprintf("%s: the struct %s has no field %s", raw, typeName, field)
		if guess := annotations.Closest(field, names); guess != "" {
			msg += fmt.Sprintf("; did you mean %s?", guess)
		} else if len(names) > 0 {
			msg += "; its fields are " + joinAnd(names)
		}
		return nil, &Error{Pos: pos, Msg: msg}
	}
	if !f.Exported() {
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: field %s of %s is unexported, so msgpack does not store it and every read would return it empty; export it", raw, field, typeName)}
	}
	for i := range st.NumFields() {
		if st.Field(i) == f && msgpackName(st.Tag(i)) == "-" {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf(`%s: field %s of %s is tagged msgpack:"-", so it is not stored and every read would return it empty; remove the tag, as the key needs the field in the value`, raw, field, typeName)}
		}
	}
	p := &param{Field: field, Type: f.Type(), Pos: pos}
	b, _ := f.Type().Underlying().(*types.Basic)
	switch {
	case b == nil:
	case b.Kind() == types.Invalid:
		return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: the type of %s.%s does not type-check", raw, typeName, field)}
	case b.Info()&types.IsString != 0:
		p.Kind, p.Exact = keyString, types.Identical(f.Type(), types.Typ[types.String])
		return p, nil
	case b.Info()&types.IsUnsigned != 0:
		p.Kind, p.Exact = keyUint, types.Identical(f.Type(), types.Typ[types.Uint64])
		return p, nil
	case b.Info()&types.IsInteger != 0:
		p.Kind, p.Exact = keyInt, types.Identical(f.Type(), types.Typ[types.Int64])
		return p, nil
	}
	return nil, &Error{Pos: pos, Msg: fmt.Sprintf("%s: field %s of %s has type %s; a key field must be a string or an integer, or a named type based on one",
		raw, field, typeName, types.TypeString(f.Type(), qualifier(in.Types)))}
}

// importNames chooses the name of every package the file may import: its
// own name, unless a package-level declaration or an earlier import has
// it, then the name with the first free number appended.
func importNames(self *types.Package, pkg *pkgModel) map[string]importName {
	// The fixed imports come first, so they keep their names.
	fixed := []string{"context", "maps", "slices", "strconv", "time", runtimePath, redisPath}
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
