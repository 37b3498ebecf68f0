package generator

import (
	"cmp"
	"fmt"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// codecPlan is a struct's generated msgpack codec: the struct as a map of
// its exported fields, keyed and ordered as msgpack's reflection writes it,
// so either side reads what the other wrote.
type codecPlan struct {
	Fields []*codecField
}

// codecField is one key of the map.
type codecField struct {
	Field string // the Go field
	Key   string // the map key: the msgpack tag's name, or the field's
	Type  types.Type
	// Wire says how the value is written and read; nil sends it through
	// msgpack's reflection (wire.AppendValue and wire.ReadValue).
	Wire *wireType
	// Empty is the test that omits an omitempty field; emptyNever when
	// the field has no omitempty.
	Empty emptyKind
}

// wireType is how the generated codec writes and reads a value of Type.
type wireType struct {
	Type  types.Type
	Kind  wireKind
	Basic *wireBasic   // wireBasicKind
	Elem  *wireType    // the element of a slice, map or pointer
	Key   *wireType    // a map's key
	Plan  *codecPlan   // wireStruct: the fields, every one with its Wire
	Named *types.Named // wireStruct: the struct type
	// Func writes and reads a wireStruct: set by planCodecFuncs, once
	// every entity's codec is planned.
	Func *codecFunc
}

type wireKind int

const (
	wireBasicKind wireKind = iota
	wireSlice
	wireMap
	wirePointer
	wireStruct
)

// wireBasic names the wire functions of a value written as one msgpack
// item, and the Go type they take and return: the value is converted to
// Arg to be written, and from Result once read.
type wireBasic struct {
	Append, Read string
	Arg, Result  types.Type
}

// emptyKind is how omitempty tests a field, as msgpack's isEmptyValue.
type emptyKind int

const (
	emptyNever       emptyKind = iota // always written
	emptyZero                         // v.F == 0
	emptyFalse                        // !v.F
	emptyLen                          // len(v.F) == 0
	emptyNil                          // v.F == nil
	emptyIsZero                       // v.F.IsZero()
	emptyNilOrIsZero                  // v.F == nil || v.F.IsZero()
)

// basicWires are the functions of each basic kind, the ones matching the
// Encoder method msgpack's reflection calls for it with default options:
// int and uint in the fewest bytes, the sized kinds at their width.
var basicWires = map[types.BasicKind]wireBasic{
	types.Bool:    {"AppendBool", "ReadBool", types.Typ[types.Bool], types.Typ[types.Bool]},
	types.Int:     {"AppendInt", "ReadInt64", types.Typ[types.Int64], types.Typ[types.Int64]},
	types.Int8:    {"AppendInt8", "ReadInt64", types.Typ[types.Int8], types.Typ[types.Int64]},
	types.Int16:   {"AppendInt16", "ReadInt64", types.Typ[types.Int16], types.Typ[types.Int64]},
	types.Int32:   {"AppendInt32", "ReadInt64", types.Typ[types.Int32], types.Typ[types.Int64]},
	types.Int64:   {"AppendInt64", "ReadInt64", types.Typ[types.Int64], types.Typ[types.Int64]},
	types.Uint:    {"AppendUint", "ReadUint64", types.Typ[types.Uint64], types.Typ[types.Uint64]},
	types.Uint8:   {"AppendUint8", "ReadUint64", types.Typ[types.Uint8], types.Typ[types.Uint64]},
	types.Uint16:  {"AppendUint16", "ReadUint64", types.Typ[types.Uint16], types.Typ[types.Uint64]},
	types.Uint32:  {"AppendUint32", "ReadUint64", types.Typ[types.Uint32], types.Typ[types.Uint64]},
	types.Uint64:  {"AppendUint64", "ReadUint64", types.Typ[types.Uint64], types.Typ[types.Uint64]},
	types.Float32: {"AppendFloat32", "ReadFloat32", types.Typ[types.Float32], types.Typ[types.Float32]},
	types.Float64: {"AppendFloat64", "ReadFloat64", types.Typ[types.Float64], types.Typ[types.Float64]},
	types.String:  {"AppendString", "ReadString", types.Typ[types.String], types.Typ[types.String]},
}

// byteSlice is []byte, which msgpack writes as bin.
var byteSlice = types.NewSlice(types.Typ[types.Byte])

// methodsMsgpackUses are the methods msgpack prefers to its reflection: a
// type with one of them keeps it, through reflection. An annotated struct
// must not declare the ones the generated codec declares either.
var methodsMsgpackUses = []string{
	"EncodeMsgpack", "DecodeMsgpack", "MarshalMsgpack", "UnmarshalMsgpack",
	"MarshalBinary", "UnmarshalBinary", "MarshalText", "UnmarshalText",
}

// encodesItself reports a named type msgpack encodes through one of
// methodsMsgpackUses rather than by its kind.
func encodesItself(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	for _, m := range methodsMsgpackUses {
		if declares(n, m) {
			return true
		}
	}
	return false
}

// The methods the generated codec declares: appendMethod and readMethod,
// which the runtime calls on byte slices (Glue.Encode and Glue.Decode), and
// encodeMethod and decodeMethod over them, which msgpack calls.
const (
	appendMethod = "AppendMsgpack"
	readMethod   = "ReadMsgpack"
	encodeMethod = "EncodeMsgpack"
	decodeMethod = "DecodeMsgpack"
)

// generatedCodecMethods are the methods the generated codec declares,
// which an annotated struct must not declare already.
var generatedCodecMethods = []string{encodeMethod, decodeMethod, appendMethod, readMethod}

// planCodec models the codec of an annotated struct, or returns nil with a
// note saying why msgpack's reflection encodes it. Notes also name each
// field left to reflection.
func planCodec(named *types.Named, spec *annotations.Spec, qual types.Qualifier) (*codecPlan, []string) {
	owner := types.TypeString(named, qual)
	if spec.Codec == annotations.CodecReflect {
		return nil, []string{fmt.Sprintf("%s is encoded by reflection: codec=reflect", owner)}
	}
	for _, m := range generatedCodecMethods {
		if declares(named, m) {
			return nil, []string{fmt.Sprintf("%s is encoded by reflection: it declares %s already", owner, m)}
		}
	}
	plan, why := planStruct(named, []*types.Named{named})
	if plan == nil {
		return nil, []string{fmt.Sprintf("%s is encoded by reflection: %s", owner, why)}
	}
	var notes []string
	for _, f := range plan.Fields {
		if f.Wire == nil {
			notes = append(notes, fmt.Sprintf("%s.%s (%s) is encoded by reflection", owner, f.Field, types.TypeString(f.Type, qual)))
		}
	}
	return plan, notes
}

// msgpackName is the name a struct tag gives its field in msgpack: "-"
// leaves the field out, "" keeps the Go name.
func msgpackName(tag string) string {
	name, _, _ := strings.Cut(reflect.StructTag(tag).Get("msgpack"), ",")
	return name
}

// declares reports whether t or *t has the method name.
func declares(t types.Type, name string) bool {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, nil, name)
	_, ok := obj.(*types.Func)
	return ok
}

// planStruct models the map msgpack makes of a struct, or says why the
// generated code cannot mirror it. stack holds the structs being planned,
// so a recursive type is left to reflection where it recurs.
func planStruct(named *types.Named, stack []*types.Named) (*codecPlan, string) {
	st := named.Underlying().(*types.Struct)
	plan := &codecPlan{}
	keys := map[string]bool{}
	for i := range st.NumFields() {
		f := st.Field(i)
		tag := reflect.StructTag(st.Tag(i)).Get("msgpack")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Name() == "_msgpack" {
			return nil, "its _msgpack field sets options for the whole struct"
		}
		if f.Embedded() {
			return nil, fmt.Sprintf("msgpack inlines the embedded field %s", f.Name())
		}
		if !f.Exported() {
			continue
		}
		if strings.ContainsAny(tag, `'"`) {
			return nil, fmt.Sprintf("the msgpack tag of %s is quoted", f.Name())
		}
		omitEmpty := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omitEmpty = true
			default:
				return nil, fmt.Sprintf("the msgpack tag of %s has option %q", f.Name(), o)
			}
		}
		if name == "" {
			name = f.Name()
		}
		if keys[name] {
			return nil, fmt.Sprintf("two fields have the msgpack name %q", name)
		}
		keys[name] = true
		cf := &codecField{Field: f.Name(), Key: name, Type: f.Type(), Wire: wireOf(f.Type(), stack)}
		if omitEmpty {
			cf.Empty = emptyOf(f.Type())
			if cf.Empty == emptyNever {
				return nil, fmt.Sprintf("%s has omitempty and a type whose emptiness only reflection tells", f.Name())
			}
		}
		plan.Fields = append(plan.Fields, cf)
	}
	return plan, ""
}

// wireOf returns how the generated code writes and reads t as msgpack's
// reflection does, or nil to leave t to reflection: interfaces, arrays,
// types with methods msgpack honours, structs it cannot mirror.
func wireOf(t types.Type, stack []*types.Named) *wireType {
	t = types.Unalias(t)
	if isTime(t) {
		tt := t
		return &wireType{Type: t, Kind: wireBasicKind, Basic: &wireBasic{"AppendTime", "ReadTime", tt, tt}}
	}
	if encodesItself(t) {
		return nil
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if b, ok := basicWires[u.Kind()]; ok {
			return &wireType{Type: t, Kind: wireBasicKind, Basic: &b}
		}
	case *types.Slice:
		if e, ok := types.Unalias(u.Elem()).(*types.Basic); ok && e.Kind() == types.Uint8 {
			return &wireType{Type: t, Kind: wireBasicKind, Basic: &wireBasic{"AppendBytes", "ReadBytes", byteSlice, byteSlice}}
		}
		if elem := wireOf(u.Elem(), stack); elem != nil && !isByteLike(u.Elem()) {
			return &wireType{Type: t, Kind: wireSlice, Elem: elem}
		}
	case *types.Map:
		key, elem := wireOf(u.Key(), stack), wireOf(u.Elem(), stack)
		if key != nil && key.Kind == wireBasicKind && elem != nil {
			return &wireType{Type: t, Kind: wireMap, Key: key, Elem: elem}
		}
	case *types.Pointer:
		if elem := wireOf(u.Elem(), stack); elem != nil {
			return &wireType{Type: t, Kind: wirePointer, Elem: elem}
		}
	case *types.Struct:
		named, ok := t.(*types.Named)
		if !ok || slices.Contains(stack, named) || named.TypeArgs().Len() > 0 {
			return nil
		}
		if plan, _ := planStruct(named, append(stack, named)); plan != nil && allWired(plan) {
			return &wireType{Type: t, Kind: wireStruct, Plan: plan, Named: named}
		}
	}
	return nil
}

// isByteLike reports a named type over uint8, which msgpack would write
// as bin inside a slice; such slices are left to it.
func isByteLike(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Uint8
}

func allWired(p *codecPlan) bool {
	for _, f := range p.Fields {
		if f.Wire == nil {
			return false
		}
	}
	return true
}

// isTime reports time.Time, which msgpack writes as its timestamp
// extension.
func isTime(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

// emptyOf returns the test msgpack's isEmptyValue makes of a value of t,
// or emptyNever when it is one this generator does not reproduce (a
// struct compared field by field, an interface looked through).
func emptyOf(t types.Type) emptyKind {
	t = types.Unalias(t)
	u := t.Underlying()
	if _, ok := u.(*types.Interface); ok {
		return emptyNever
	}
	if hasIsZero(t) {
		switch u.(type) {
		case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature:
			return emptyNilOrIsZero
		}
		return emptyIsZero
	}
	switch u := u.(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return emptyFalse
		case u.Info()&types.IsString != 0:
			return emptyLen
		case u.Info()&(types.IsInteger|types.IsFloat) != 0:
			return emptyZero
		}
	case *types.Slice, *types.Map:
		return emptyLen
	case *types.Pointer:
		return emptyNil
	}
	return emptyNever
}

// hasIsZero reports whether values of t have the method IsZero() bool,
// which msgpack's omitempty asks before anything else.
func hasIsZero(t types.Type) bool {
	obj, _, _ := types.LookupFieldOrMethod(t, false, nil, "IsZero")
	fn, ok := obj.(*types.Func)
	if !ok {
		return false
	}
	sig := fn.Type().(*types.Signature)
	if sig.Params().Len() != 0 || sig.Results().Len() != 1 {
		return false
	}
	b, ok := sig.Results().At(0).Type().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// codecFunc is the pair of generated functions that write and read one
// struct type, appendMsgpack<Name> and readMsgpack<Name>: one pair for
// each struct type a codec of the package handles, the entities' own and
// every named struct reached through their fields, slices, maps and
// pointers. A nested value is written and read by a call, so a change to
// a nested type changes its own functions, not every entity holding it.
// The entities' methods (AppendMsgpack, ReadMsgpack) call their pair.
type codecFunc struct {
	// Name sets the functions apart: the type's name, after its
	// package's name for another package's type, numbered when taken.
	Name string
	Type *types.Named
	Plan *codecPlan
	// Spelt is the type as the generated file spells it ("Item",
	// "geo.Place"), for doc comments.
	Spelt string
}

// Append and Read are the names of the pair.
func (fn *codecFunc) Append() string { return "appendMsgpack" + fn.Name }
func (fn *codecFunc) Read() string   { return "readMsgpack" + fn.Name }

// Fails reports that the append function returns an error: a field of
// the type is left to msgpack's reflection (wire.AppendValue), which can
// fail. Only an entity's can: a nested struct has a codec of its own only
// when every field has one (wireOf).
func (fn *codecFunc) Fails() bool { return !allWired(fn.Plan) }

// planCodecFuncs gives every struct type the entities' codecs handle its
// pair of functions, sets each entity's and each wireStruct's Func, and
// returns the pairs sorted by name.
//
// A nested struct's plan is the same wherever the type appears: wireOf
// gives it a plan only when nothing it reaches leads back to a struct
// being planned, which, the stack being the way to it, would make a cycle
// through the type itself. So the first plan met stands for them all.
func planCodecFuncs(in *pkgInput, entities []*entity) []*codecFunc {
	byKey := map[string]*codecFunc{} // by typeKey
	add := func(t *types.Named, plan *codecPlan) *codecFunc {
		key := typeKey(t)
		if byKey[key] == nil {
			byKey[key] = &codecFunc{Type: t, Plan: plan}
		}
		return byKey[key]
	}
	var visit func(w *wireType)
	visit = func(w *wireType) {
		if w == nil {
			return
		}
		if w.Kind == wireStruct {
			w.Func = add(w.Named, w.Plan)
			for _, f := range w.Plan.Fields {
				visit(f.Wire)
			}
			return
		}
		visit(w.Elem)
		visit(w.Key)
	}
	for _, e := range entities {
		if e.Codec == nil {
			continue
		}
		e.CodecFunc = add(e.Type, e.Codec)
		for _, f := range e.Codec.Fields {
			visit(f.Wire)
		}
	}

	// Local types first, so they get the plain names; then by package
	// and name, as the clone functions are named (cloner.finish).
	var funcs []*codecFunc
	for _, fn := range byKey {
		funcs = append(funcs, fn)
	}
	slices.SortFunc(funcs, func(a, b *codecFunc) int {
		pa, pb := a.Type.Obj().Pkg(), b.Type.Obj().Pkg()
		return cmp.Or(
			cmp.Compare(boolInt(pa != in.Types), boolInt(pb != in.Types)),
			cmp.Compare(pa.Path(), pb.Path()),
			cmp.Compare(a.Type.Obj().Name(), b.Type.Obj().Name()),
			cmp.Compare(typeKey(a.Type), typeKey(b.Type)),
		)
	})
	taken := map[string]bool{}
	declared := func(name string) bool {
		fn := codecFunc{Name: name}
		return in.Types.Scope().Lookup(fn.Append()) != nil || in.Types.Scope().Lookup(fn.Read()) != nil
	}
	for _, fn := range funcs {
		base := upperFirst(fn.Type.Obj().Name())
		if p := fn.Type.Obj().Pkg(); p != in.Types {
			base = upperFirst(p.Name()) + base
		}
		name := base
		for i := 2; taken[name] || declared(name); i++ {
			name = fmt.Sprintf("%s%d", base, i)
		}
		taken[name] = true
		fn.Name = name
		fn.Spelt = types.TypeString(fn.Type, qualifier(in.Types))
	}
	slices.SortFunc(funcs, func(a, b *codecFunc) int { return cmp.Compare(a.Name, b.Name) })
	return funcs
}
