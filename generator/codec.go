package generator

import (
	"fmt"
	"go/types"
	"reflect"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// msgpackPath is the codec the runtime stores values with.
const msgpackPath = "github.com/vmihailenco/msgpack/v5"

// codecPlan is an entity's generated msgpack codec: the struct as a map of
// its exported fields, keyed and ordered as msgpack's reflection writes it,
// so either side reads what the other wrote.
type codecPlan struct {
	Fields []*codecField
}

// codecField is one key of the map.
type codecField struct {
	Field string // the Go field
	Key   string // the map key: the msgpack tag's name, or the field's
	// Scalar says how a field of a basic type (or []byte) is written and
	// read without reflection; nil sends the field through msgpack's
	// reflection, enc.Encode(&v.Field).
	Scalar *scalarCodec
	// Empty is the test that omits an omitempty field; emptyNever when
	// the field has no omitempty.
	Empty emptyKind
}

// scalarCodec names the Encoder and Decoder methods of one basic type,
// with the conversions between the field and their argument and result.
type scalarCodec struct {
	Encode, EncodeConv string // enc.EncodeInt(int64(v.F))
	Decode, DecodeConv string // x, err := dec.DecodeInt64(); v.F = int(x)
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

// scalarCodecs are the basic types with an Encoder method of their own,
// the ones msgpack's reflection calls for them with default options.
var scalarCodecs = map[types.BasicKind]*scalarCodec{
	types.Bool:    {"EncodeBool", "", "DecodeBool", ""},
	types.Int:     {"EncodeInt", "int64", "DecodeInt64", "int"},
	types.Int8:    {"EncodeInt8", "", "DecodeInt64", "int8"},
	types.Int16:   {"EncodeInt16", "", "DecodeInt64", "int16"},
	types.Int32:   {"EncodeInt32", "", "DecodeInt64", "int32"},
	types.Int64:   {"EncodeInt64", "", "DecodeInt64", ""},
	types.Uint:    {"EncodeUint", "uint64", "DecodeUint64", "uint"},
	types.Uint8:   {"EncodeUint8", "", "DecodeUint64", "uint8"},
	types.Uint16:  {"EncodeUint16", "", "DecodeUint64", "uint16"},
	types.Uint32:  {"EncodeUint32", "", "DecodeUint64", "uint32"},
	types.Uint64:  {"EncodeUint64", "", "DecodeUint64", ""},
	types.Float32: {"EncodeFloat32", "", "DecodeFloat32", ""},
	types.Float64: {"EncodeFloat64", "", "DecodeFloat64", ""},
	types.String:  {"EncodeString", "", "DecodeString", ""},
}

// bytesCodec writes and reads an unnamed []byte as msgpack bin.
var bytesCodec = &scalarCodec{"EncodeBytes", "", "DecodeBytes", ""}

// methodsMsgpackUses are the methods msgpack prefers to its reflection,
// and the ones the generated codec declares: a struct with one of them
// keeps its own.
var methodsMsgpackUses = []string{"EncodeMsgpack", "DecodeMsgpack", "MarshalMsgpack", "UnmarshalMsgpack"}

// planCodec models the codec of an annotated struct, or returns nil with a
// note saying why msgpack's reflection encodes it. Notes also name each
// field left to reflection.
func planCodec(named *types.Named, spec *annotations.Spec, qual types.Qualifier) (*codecPlan, []string) {
	owner := types.TypeString(named, qual)
	if spec.Codec == annotations.CodecReflect {
		return nil, []string{fmt.Sprintf("%s is encoded by reflection: codec=reflect", owner)}
	}
	fallback := func(why string) (*codecPlan, []string) {
		return nil, []string{fmt.Sprintf("%s is encoded by reflection: %s", owner, why)}
	}
	for _, m := range methodsMsgpackUses {
		if obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(named), true, named.Obj().Pkg(), m); obj != nil {
			return fallback(fmt.Sprintf("it declares %s already", m))
		}
	}
	st := named.Underlying().(*types.Struct)
	plan := &codecPlan{}
	var notes []string
	keys := map[string]bool{}
	for i := range st.NumFields() {
		f := st.Field(i)
		tag := reflect.StructTag(st.Tag(i)).Get("msgpack")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Name() == "_msgpack" {
			return fallback("its _msgpack field sets options for the whole struct")
		}
		if f.Embedded() {
			return fallback(fmt.Sprintf("msgpack inlines the embedded field %s", f.Name()))
		}
		if !f.Exported() {
			continue
		}
		if strings.ContainsAny(tag, `'"`) {
			return fallback(fmt.Sprintf("the msgpack tag of %s is quoted", f.Name()))
		}
		omitEmpty := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omitEmpty = true
			default:
				return fallback(fmt.Sprintf("the msgpack tag of %s has option %q", f.Name(), o))
			}
		}
		if name == "" {
			name = f.Name()
		}
		if keys[name] {
			return fallback(fmt.Sprintf("two fields have the msgpack name %q", name))
		}
		keys[name] = true
		cf := &codecField{Field: f.Name(), Key: name, Scalar: scalarOf(f.Type())}
		if omitEmpty {
			cf.Empty = emptyOf(f.Type())
			if cf.Empty == emptyNever {
				return fallback(fmt.Sprintf("%s has omitempty and a type whose emptiness only reflection tells", f.Name()))
			}
		}
		if cf.Scalar == nil {
			notes = append(notes, fmt.Sprintf("%s.%s (%s) is encoded by reflection", owner, f.Name(), types.TypeString(f.Type(), qual)))
		}
		plan.Fields = append(plan.Fields, cf)
	}
	return plan, notes
}

// scalarOf returns the codec of an unnamed basic type or []byte, nil for
// every other type: named types may have methods msgpack honours.
func scalarOf(t types.Type) *scalarCodec {
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		return scalarCodecs[t.Kind()]
	case *types.Slice:
		if b, ok := types.Unalias(t.Elem()).(*types.Basic); ok && b.Kind() == types.Uint8 {
			return bytesCodec
		}
	}
	return nil
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
