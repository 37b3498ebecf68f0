package generator

import (
	"cmp"
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

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
	// Codecs are the generated codec's functions, sorted by name: a pair
	// for each entity with a generated codec and for each named struct
	// type one reaches.
	Codecs []*codecFunc
	// Imports names every package the file may import, by path, chosen so
	// that none clashes with a package-level name or another import.
	Imports map[string]importName
	// Notes are what -v reports: parts of values copied shallowly, and
	// encoded by reflection.
	Notes []string
	// Warnings are the changes of a wire shape a deploy should know of,
	// accepted (checkShape).
	Warnings ErrorList
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
	// CodecFunc is the pair of functions the codec's methods call.
	CodecFunc *codecFunc
	// codecNotes say, for -v, what the codec leaves to reflection.
	codecNotes []string
	// Collection is set for layout=hash (collection.go).
	Collection *collection
	// Version is the annotation's version=; Shape the wire shape of the
	// values, which the generated file records (shape.go).
	Version int
	Shape   *shape
}

// Composite reports that the key has more than one field, so the cache is
// keyed by a generated struct of them, KeyName; a single-field key is the
// field's own type, which is cheaper to hash and needs no declaration.
func (e *entity) Composite() bool { return len(e.Params) > 1 }

// buildPackage turns targets, the annotated structs of in, into the
// package model. It returns nil when the package has no annotations.
func buildPackage(in *pkgInput, targets []target) (*pkgModel, ErrorList) {
	if len(targets) == 0 {
		return nil, nil
	}
	targets = slices.Clone(targets)
	slices.SortFunc(targets, func(a, b target) int { return cmp.Compare(a.Obj.Name(), b.Obj.Name()) })

	recorded, errs := readShapes(in.Output, in.Previous)
	annotated := map[string]bool{}
	for _, t := range targets {
		annotated[t.Obj.Name()] = true
	}
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
		old, note := recordOf(recorded, annotated, e.Shape)
		if note != "" {
			pkg.Notes = append(pkg.Notes, note)
		}
		serrs, swarns, notes := checkShape(old, e.Shape, t.Spec)
		errs = append(errs, serrs...)
		pkg.Warnings = append(pkg.Warnings, swarns...)
		pkg.Notes = append(pkg.Notes, notes...)
		for _, gen := range e.generatedNames() {
			name := gen.Name
			first, dup := byName[name]
			switch obj := in.Types.Scope().Lookup(name); {
			case obj != nil:
				errs.Add(t.Spec.Pos, annotations.RuleNameClash, fmt.Sprintf("the generated %s %s would clash with the %s %s declared at %s; rename one, or set name= to generate other names",
					gen.What, name, declKind(obj), name, posFrom(t.Spec.Pos, in.Fset.Position(obj.Pos()))))
				continue
			case !dup:
				byName[name] = generatedAt{gen.What, t.Spec.Pos}
				continue
			case name == e.Repo() && first.What == gen.What:
				errs.Add(t.Spec.Pos, annotations.RuleNameClash, fmt.Sprintf("two repositories would be named %s; the other one's directive is at %s; set name= on one of them",
					e.Repo(), posFrom(t.Spec.Pos, first.Pos)))
			default:
				errs.Add(t.Spec.Pos, annotations.RuleNameClash, fmt.Sprintf("the generated %s %s would clash with the %s of that name generated for the directive at %s; set name= on one of them",
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
	var cloneNotes []string
	pkg.Clones, pkg.Guards, cloneNotes = cl.finish()
	pkg.Notes = append(pkg.Notes, cloneNotes...)
	pkg.Codecs = planCodecFuncs(in, pkg.Entities)
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

	e := &entity{Type: named, Name: t.name(), Template: t.Spec.Key.Raw, Version: t.Spec.Version}
	e.Key, e.Params, errs = buildKey(in, st, t)
	if len(e.Key) > 0 && e.Key[0].Param == nil {
		lit := e.Key[0].Lit
		e.Key[0].Lit = versionedKey(lit, e.Version)
		e.Template = e.Key[0].Lit + strings.TrimPrefix(e.Template, lit)
	}
	col, cerrs := buildCollection(in, st, t, e.Params)
	errs = append(errs, cerrs...)
	e.Collection = col
	// A composite key becomes a struct of the key fields with a String
	// method; a field of that name would not compile.
	for _, p := range e.Params {
		if p.Field == keyMethod && e.Composite() {
			errs.Add(p.Pos, annotations.RuleFieldInvalid, fmt.Sprintf("%s: a key of several fields cannot use a field named String: the fields become those of the generated struct %s, whose String method builds the Redis key; rename the field",
				t.Spec.Key.Raw, e.KeyName()))
		}
	}
	errs = append(errs, unencodable(in, named)...)

	opts, oerrs := options(t.entity(), t.Spec)
	errs = append(errs, oerrs...)
	e.Options = opts
	e.Changes, e.Bloom = t.Spec.Changes, t.Spec.Bloom

	if path := lockPath(named); path != "" {
		errs.Add(t.Spec.Pos, annotations.RuleLockInValue, fmt.Sprintf("%s holds a lock (%s): every read returns a copy of the cached value, and a lock must not be copied", t.Obj.Name(), path))
		return nil, errs
	}
	e.Clone = cl.entity(named)
	e.Codec, e.codecNotes = planCodec(named, t.Spec, qualifier(nil))
	if len(errs) > 0 {
		return nil, errs
	}
	e.Shape = shapeOf(in, t, named)
	return e, nil
}
