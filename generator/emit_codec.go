package generator

import (
	"fmt"
	"go/types"

	"github.com/dave/jennifer/jen"
)

// wr is a function of the wire package.
func wr(name string) *jen.Statement { return jen.Qual(wirePath, name) }

// failed is `if err != nil { return <results> }`.
func failed(results ...jen.Code) jen.Code {
	return jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(results...))
}

// present is the condition under which an omitempty field of x is
// written: the negation of msgpack's isEmptyValue for its type.
func present(x func() *jen.Statement, empty emptyKind) *jen.Statement {
	switch empty {
	case emptyZero:
		return x().Op("!=").Lit(0)
	case emptyFalse:
		return x()
	case emptyLen:
		return jen.Len(x()).Op("!=").Lit(0)
	case emptyNil:
		return x().Op("!=").Nil()
	case emptyIsZero:
		return jen.Op("!").Add(x()).Dot("IsZero").Call()
	case emptyNilOrIsZero:
		return x().Op("!=").Nil().Op("&&").Op("!").Add(x()).Dot("IsZero").Call()
	}
	return jen.True()
}

// convertTo is x converted to t, or x when it has that type already.
func convertTo(x jen.Code, from, to types.Type) jen.Code {
	if types.Identical(from, to) {
		return x
	}
	return jen.Add(typeCode(to)).Call(x)
}

// name is a variable of the generated code, numbered by nesting depth so
// an inner loop never shadows what an outer one assigns to.
func name(prefix string, depth int) *jen.Statement { return jen.Id(fmt.Sprint(prefix, depth)) }

// emitCodec writes AppendMsgpack and ReadMsgpack, which the runtime calls
// on byte slices, and EncodeMsgpack and DecodeMsgpack over them, so the
// struct keeps its codec inside other msgpack values.
func emitCodec(f *jen.File, e *entity) {
	if e.Codec == nil {
		return
	}
	recv := jen.Id("v").Op("*").Add(typeCode(e.Type))
	v := func() *jen.Statement { return jen.Id("v") }

	doc(f, "AppendMsgpack appends v to b as msgpack, byte for byte what msgpack's reflection writes: a map of its exported fields.")
	body := appendStruct(e.Codec, v, 0)
	body = append(body, jen.Return(jen.Id("b"), jen.Nil()))
	f.Func().Params(recv.Clone()).Id("AppendMsgpack").Params(jen.Id("b").Index().Byte()).
		Params(jen.Index().Byte(), jen.Error()).Block(body...)

	doc(f, "ReadMsgpack sets v from the msgpack in b, written by AppendMsgpack, EncodeMsgpack or msgpack's reflection: keys in any order, unknown keys skipped, fields the map lacks left as they were.")
	read := []jen.Code{jen.Var().Err().Error()}
	deref := func() *jen.Statement { return jen.Op("*").Id("v") }
	read = append(read, readStruct(e.Codec, v, deref, typeCode(e.Type), 0)...)
	read = append(read, jen.Return(jen.Nil()))
	f.Func().Params(recv.Clone()).Id("ReadMsgpack").Params(jen.Id("b").Index().Byte()).Error().Block(read...)

	doc(f, "EncodeMsgpack writes v as AppendMsgpack does. It implements msgpack.CustomEncoder.")
	f.Func().Params(recv.Clone()).Id("EncodeMsgpack").Params(jen.Id("enc").Op("*").Qual(msgpackPath, "Encoder")).Error().Block(
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("v").Dot("AppendMsgpack").Call(jen.Nil()),
		failed(jen.Err()),
		jen.Return(jen.Id("enc").Dot("Encode").Call(jen.Qual(msgpackPath, "RawMessage").Call(jen.Id("b")))),
	)

	doc(f, "DecodeMsgpack reads v as ReadMsgpack does. It implements msgpack.CustomDecoder.")
	f.Func().Params(recv.Clone()).Id("DecodeMsgpack").Params(jen.Id("dec").Op("*").Qual(msgpackPath, "Decoder")).Error().Block(
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("dec").Dot("DecodeRaw").Call(),
		failed(jen.Err()),
		jen.Return(jen.Id("v").Dot("ReadMsgpack").Call(jen.Id("b"))),
	)
}

// appendStruct writes the map of plan's fields of x.
func appendStruct(plan *codecPlan, x func() *jen.Statement, depth int) []jen.Code {
	required := 0
	var count []jen.Code
	n := name("n", depth)
	for _, fc := range plan.Fields {
		if fc.Empty == emptyNever {
			required++
		} else {
			count = append(count, jen.If(present(fieldOf(x, fc), fc.Empty)).Block(n.Clone().Op("++")))
		}
	}
	var body []jen.Code
	if len(count) == 0 {
		body = append(body, appendTo(wr("AppendMapLen").Call(jen.Id("b"), jen.Lit(required))))
	} else {
		body = append(body, n.Clone().Op(":=").Lit(required))
		body = append(body, count...)
		body = append(body, appendTo(wr("AppendMapLen").Call(jen.Id("b"), n.Clone())))
	}
	for _, fc := range plan.Fields {
		key := string(wireKey(fc.Key))
		stmts := []jen.Code{jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(key).Op("..."))}
		if fc.Wire == nil {
			stmts = append(stmts,
				jen.List(jen.Id("b"), jen.Err()).Op("=").Add(wr("AppendValue")).Call(jen.Id("b"), jen.Op("&").Add(fieldOf(x, fc)())),
				failed(jen.Nil(), jen.Err()),
			)
		} else {
			stmts = append(stmts, scoped(appendValue(fc.Wire, fieldOf(x, fc), depth))...)
		}
		if fc.Empty == emptyNever {
			body = append(body, stmts...)
		} else {
			body = append(body, jen.If(present(fieldOf(x, fc), fc.Empty)).Block(stmts...))
		}
	}
	if !allWired(plan) && depth == 0 {
		body = append([]jen.Code{jen.Var().Err().Error()}, body...)
	}
	return body
}

// fieldOf is x.F.
func fieldOf(x func() *jen.Statement, fc *codecField) func() *jen.Statement {
	return func() *jen.Statement { return x().Dot(fc.Field) }
}

// appendTo is b = call.
func appendTo(call jen.Code) jen.Code { return jen.Id("b").Op("=").Add(call) }

// wireKey is a map key as msgpack writes it: a str header and the name.
func wireKey(key string) []byte {
	var h []byte
	switch n := len(key); {
	case n < 32:
		h = []byte{0xa0 | byte(n)}
	case n < 256:
		h = []byte{0xd9, byte(n)}
	default:
		h = []byte{0xda, byte(n >> 8), byte(n)}
	}
	return append(h, key...)
}

// appendValue writes x, of type w.
func appendValue(w *wireType, x func() *jen.Statement, depth int) []jen.Code {
	switch w.Kind {
	case wireBasicKind:
		return []jen.Code{appendTo(wr(w.Basic.Append).Call(jen.Id("b"), convertTo(x(), w.Type, w.Basic.Arg)))}
	case wireSlice:
		e := name("e", depth)
		return []jen.Code{jen.If(x().Op("==").Nil()).Block(appendTo(wr("AppendNil").Call(jen.Id("b")))).Else().Block(
			appendTo(wr("AppendArrayLen").Call(jen.Id("b"), jen.Len(x()))),
			jen.For(jen.List(jen.Id("_"), e.Clone()).Op(":=").Range().Add(x())).Block(
				appendValue(w.Elem, func() *jen.Statement { return e.Clone() }, depth+1)...),
		)}
	case wireMap:
		k, e := name("k", depth), name("e", depth)
		loop := append(scoped(appendValue(w.Key, func() *jen.Statement { return k.Clone() }, depth+1)),
			scoped(appendValue(w.Elem, func() *jen.Statement { return e.Clone() }, depth+1))...)
		return []jen.Code{jen.If(x().Op("==").Nil()).Block(appendTo(wr("AppendNil").Call(jen.Id("b")))).Else().Block(
			appendTo(wr("AppendMapLen").Call(jen.Id("b"), jen.Len(x()))),
			jen.For(jen.List(k.Clone(), e.Clone()).Op(":=").Range().Add(x())).Block(loop...),
		)}
	case wirePointer:
		return []jen.Code{jen.If(x().Op("==").Nil()).Block(appendTo(wr("AppendNil").Call(jen.Id("b")))).Else().Block(
			appendValue(w.Elem, pointee(w, x), depth+1)...)}
	case wireStruct:
		return appendStruct(w.Plan, x, depth+1)
	}
	panic("unreachable")
}

// readStruct reads the struct x, of type typ, from a map of its fields or
// from an array of all of them in order, as msgpack's reflection reads it;
// whole is the struct as an assignable value (*v when x is a pointer).
// Each key, or each position of the array, becomes the index of a field,
// so each field's reading is written once for both forms.
func readStruct(plan *codecPlan, x, whole func() *jen.Statement, typ jen.Code, depth int) []jen.Code {
	n, k, a, i, f := name("n", depth), name("k", depth), name("a", depth), name("i", depth), name("f", depth)
	var keys, cases []jen.Code
	for at, fc := range plan.Fields {
		var read []jen.Code
		if fc.Wire == nil {
			read = []jen.Code{jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(wr("ReadValue")).Call(jen.Id("b"), jen.Op("&").Add(fieldOf(x, fc)())), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))}
		} else {
			read = readValue(fc.Wire, fieldOf(x, fc), depth+1)
		}
		keys = append(keys, jen.Case(jen.Lit(fc.Key)).Block(f.Clone().Op("=").Lit(at)))
		cases = append(cases, jen.Case(jen.Lit(at)).Block(read...))
	}
	keys = append(keys, jen.Default().Block(f.Clone().Op("=").Lit(-1)))
	cases = append(cases, jen.Default().Block(
		jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(wr("Skip")).Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
	))
	return []jen.Code{
		jen.Var().Add(n.Clone()).Int(),
		jen.Var().Add(a.Clone()).Bool(),
		jen.If(jen.List(n.Clone(), a.Clone(), jen.Id("b"), jen.Err()).Op("=").Add(wr("ReadStructLen")).Call(jen.Id("b"), jen.Lit(len(plan.Fields))), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.If(n.Clone().Op("<").Lit(0)).Block(whole().Op("=").Add(typ).Values()).Else().Block(
			jen.For(i.Clone().Op(":=").Range().Add(n.Clone())).Block(
				f.Clone().Op(":=").Add(i.Clone()),
				jen.If(jen.Op("!").Add(a.Clone())).Block(
					jen.Var().Add(k.Clone()).Index().Byte(),
					readInto(k.Clone(), "ReadStringBytes"),
					jen.Switch(jen.String().Call(k.Clone())).Block(keys...),
				),
				jen.Switch(f.Clone()).Block(cases...),
			),
		),
	}
}

// readInto is `if dst, b, err = wire.fn(b); err != nil { return err }`.
func readInto(dst jen.Code, fn string) jen.Code {
	return jen.If(jen.List(dst, jen.Id("b"), jen.Err()).Op("=").Add(wr(fn)).Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
}

// readValue reads a value of type w into x, with variables numbered by
// depth; the caller gives it a scope of its own (see scoped).
func readValue(w *wireType, x func() *jen.Statement, depth int) []jen.Code {
	switch w.Kind {
	case wireBasicKind:
		if types.Identical(w.Type, w.Basic.Result) {
			return []jen.Code{readInto(x(), w.Basic.Read)}
		}
		t := name("x", depth)
		return []jen.Code{
			jen.Var().Add(t.Clone()).Add(typeCode(w.Basic.Result)),
			readInto(t.Clone(), w.Basic.Read),
			x().Op("=").Add(convertTo(t.Clone(), w.Basic.Result, w.Type)),
		}
	case wireSlice, wireMap:
		n, s := name("n", depth), name("s", depth)
		fn := "ReadArrayLen"
		var fill jen.Code
		if w.Kind == wireSlice {
			i := name("i", depth)
			fill = jen.For(i.Clone().Op(":=").Range().Add(s.Clone())).Block(
				readValue(w.Elem, func() *jen.Statement { return s.Clone().Index(i.Clone()) }, depth+1)...)
		} else {
			fn = "ReadMapLen"
			k, e := name("k", depth), name("e", depth)
			loop := []jen.Code{jen.Var().Add(k.Clone()).Add(typeCode(w.Key.Type))}
			loop = append(loop, scoped(readValue(w.Key, func() *jen.Statement { return k.Clone() }, depth+1))...)
			loop = append(loop, jen.Var().Add(e.Clone()).Add(typeCode(w.Elem.Type)))
			loop = append(loop, scoped(readValue(w.Elem, func() *jen.Statement { return e.Clone() }, depth+1))...)
			loop = append(loop, s.Clone().Index(k.Clone()).Op("=").Add(e.Clone()))
			fill = jen.For(jen.Range().Add(n.Clone())).Block(loop...)
		}
		return []jen.Code{
			jen.Var().Add(n.Clone()).Int(),
			readInto(n.Clone(), fn),
			jen.If(n.Clone().Op("<").Lit(0)).Block(x().Op("=").Nil()).Else().Block(
				s.Clone().Op(":=").Make(typeCode(w.Type), n.Clone()),
				fill,
				x().Op("=").Add(s.Clone()),
			),
		}
	case wirePointer:
		p := name("p", depth)
		elem := w.Type.Underlying().(*types.Pointer).Elem()
		return []jen.Code{jen.If(jen.List(jen.Id("rest"), jen.Id("ok")).Op(":=").Add(wr("ReadNil")).Call(jen.Id("b")), jen.Id("ok")).Block(
			x().Op("=").Nil(),
			jen.Id("b").Op("=").Id("rest"),
		).Else().Block(append(append([]jen.Code{p.Clone().Op(":=").New(typeCode(elem))},
			readPointee(w, func() *jen.Statement { return p.Clone() }, depth+1)...),
			x().Op("=").Add(p.Clone()))...)}
	case wireStruct:
		return readStruct(w.Plan, x, x, typeCode(w.Type), depth)
	}
	panic("unreachable")
}

// scoped puts stmts in a block unless there is one: a value written or
// read in several statements may declare variables, and two such values in
// one scope (a map's key and value, two nested structs) must not clash.
func scoped(stmts []jen.Code) []jen.Code {
	if len(stmts) == 1 {
		return stmts
	}
	return []jen.Code{jen.Block(stmts...)}
}

// pointee is what the pointer x, of type w, points to: x itself for a
// struct, whose fields Go reaches through the pointer, *x otherwise.
func pointee(w *wireType, x func() *jen.Statement) func() *jen.Statement {
	if w.Elem.Kind == wireStruct {
		return x
	}
	return func() *jen.Statement { return jen.Op("*").Add(x()) }
}

// readPointee reads what the new pointer p, of type w, points to.
func readPointee(w *wireType, p func() *jen.Statement, depth int) []jen.Code {
	deref := func() *jen.Statement { return jen.Op("*").Add(p()) }
	if w.Elem.Kind == wireStruct {
		return readStruct(w.Elem.Plan, p, deref, typeCode(w.Elem.Type), depth)
	}
	return readValue(w.Elem, deref, depth)
}
