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
func present(x expr, empty emptyKind) *jen.Statement {
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

// numbered is a variable of the generated code, numbered by nesting depth
// so an inner loop never shadows what an outer one assigns to.
func numbered(prefix string, depth int) expr { return id(fmt.Sprint(prefix, depth)) }

// emitCodec writes AppendMsgpack and ReadMsgpack, which the runtime calls
// on byte slices, over the entity's codec functions (emitCodecFunc), and
// EncodeMsgpack and DecodeMsgpack over them, so the struct keeps its codec
// inside other msgpack values.
func emitCodec(f *jen.File, e *entity) {
	if e.Codec == nil {
		return
	}
	fn := e.CodecFunc

	doc(f, "AppendMsgpack appends v to b as msgpack, byte for byte what msgpack's reflection writes: a map of its exported fields (%s).", fn.Append())
	call := jen.Id(fn.Append()).Call(jen.Id("b"), jen.Id("v"))
	ret := jen.Return(call)
	if !fn.Fails() {
		ret = jen.Return(call, jen.Nil())
	}
	f.Func().Params(valueParam(e)).Id(appendMethod).Params(jen.Id("b").Index().Byte()).
		Params(jen.Index().Byte(), jen.Error()).Block(ret)

	doc(f, "ReadMsgpack sets v from the msgpack in b, written by AppendMsgpack, EncodeMsgpack or msgpack's reflection: keys in any order, unknown keys skipped, fields the map lacks left as they were (%s).", fn.Read())
	f.Func().Params(valueParam(e)).Id(readMethod).Params(jen.Id("b").Index().Byte()).Error().Block(
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id(fn.Read()).Call(jen.Id("b"), jen.Id("v")),
		jen.Return(jen.Err()),
	)

	doc(f, "EncodeMsgpack writes v as AppendMsgpack does. It implements msgpack.CustomEncoder.")
	f.Func().Params(valueParam(e)).Id(encodeMethod).Params(jen.Id("enc").Op("*").Qual(msgpackPath, "Encoder")).Error().Block(
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("v").Dot(appendMethod).Call(jen.Nil()),
		failed(jen.Err()),
		jen.Return(jen.Id("enc").Dot("Encode").Call(jen.Qual(msgpackPath, "RawMessage").Call(jen.Id("b")))),
	)

	doc(f, "DecodeMsgpack reads v as ReadMsgpack does. It implements msgpack.CustomDecoder.")
	f.Func().Params(valueParam(e)).Id(decodeMethod).Params(jen.Id("dec").Op("*").Qual(msgpackPath, "Decoder")).Error().Block(
		jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("dec").Dot("DecodeRaw").Call(),
		failed(jen.Err()),
		jen.Return(jen.Id("v").Dot(readMethod).Call(jen.Id("b"))),
	)
}

// emitCodecFunc writes the pair of functions of one struct type: the
// append function, which returns an error only when a field is left to
// reflection (codecFunc.Fails), and the read function, which returns the
// rest of b. Nested values call their own type's pair, so each function
// covers one type's fields.
func emitCodecFunc(f *jen.File, fn *codecFunc) {
	v := id("v")
	typ := jen.Op("*").Add(typeCode(fn.Type))

	body := appendStruct(fn.Plan, v)
	results := jen.Index().Byte()
	if fn.Fails() {
		body = append(body, jen.Return(jen.Id("b"), jen.Nil()))
		results = jen.Params(jen.Index().Byte(), jen.Error())
	} else {
		body = append(body, jen.Return(jen.Id("b")))
	}
	doc(f, "%s appends the %s v to b as msgpack, byte for byte what msgpack's reflection writes: a map of its exported fields.", fn.Append(), fn.Spelt)
	f.Func().Id(fn.Append()).Params(jen.Id("b").Index().Byte(), jen.Id("v").Add(typ)).Add(results).Block(body...)

	read := []jen.Code{jen.Var().Err().Error()}
	read = append(read, readStruct(fn.Plan, v, deref(v), typeCode(fn.Type))...)
	read = append(read, jen.Return(jen.Id("b"), jen.Nil()))
	doc(f, "%s sets the %s v from the msgpack at the start of b, written by %s or msgpack's reflection, and returns the rest of b: a map with keys in any order, unknown keys skipped and fields it lacks left as they were, or an array of every field in order.", fn.Read(), fn.Spelt, fn.Append())
	f.Func().Id(fn.Read()).Params(jen.Id("b").Index().Byte(), jen.Id("v").Add(typ)).Params(jen.Index().Byte(), jen.Error()).Block(read...)
}

// appendStruct writes the map of plan's fields of x, a pointer to the
// struct.
func appendStruct(plan *codecPlan, x expr) []jen.Code {
	required := 0
	var count []jen.Code
	n := numbered("n", 0)
	for _, fc := range plan.Fields {
		if fc.Empty == emptyNever {
			required++
		} else {
			count = append(count, jen.If(present(field(x, fc.Field), fc.Empty)).Block(n().Op("++")))
		}
	}
	var body []jen.Code
	if len(count) == 0 {
		body = append(body, appendTo(wr("AppendMapLen").Call(jen.Id("b"), jen.Lit(required))))
	} else {
		body = append(body, n().Op(":=").Lit(required))
		body = append(body, count...)
		body = append(body, appendTo(wr("AppendMapLen").Call(jen.Id("b"), n())))
	}
	for _, fc := range plan.Fields {
		key := string(wireKey(fc.Key))
		stmts := []jen.Code{jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit(key).Op("..."))}
		if fc.Wire == nil {
			stmts = append(stmts,
				jen.List(jen.Id("b"), jen.Err()).Op("=").Add(wr("AppendValue")).Call(jen.Id("b"), jen.Op("&").Add(field(x, fc.Field)())),
				failed(jen.Nil(), jen.Err()),
			)
		} else {
			stmts = append(stmts, scoped(appendValue(fc.Wire, field(x, fc.Field), 0))...)
		}
		if fc.Empty == emptyNever {
			body = append(body, stmts...)
		} else {
			body = append(body, jen.If(present(field(x, fc.Field), fc.Empty)).Block(stmts...))
		}
	}
	if !allWired(plan) {
		body = append([]jen.Code{jen.Var().Err().Error()}, body...)
	}
	return body
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

// appendValue writes x, of type w. A struct is written by its type's
// append function (emitCodecFunc), which never fails: a nested struct has
// one only when every field is wired.
func appendValue(w *wireType, x expr, depth int) []jen.Code {
	switch w.Kind {
	case wireBasicKind:
		return []jen.Code{appendTo(wr(w.Basic.Append).Call(jen.Id("b"), convertTo(x(), w.Type, w.Basic.Arg)))}
	case wireSlice:
		var loop jen.Code
		if w.Elem.Kind == wireStruct {
			// By index: a struct is handed over by its address, not
			// copied into the loop's variable.
			i := numbered("i", depth)
			loop = jen.For(i().Op(":=").Range().Add(x())).Block(
				appendValue(w.Elem, index(x, i), depth+1)...)
		} else {
			e := numbered("e", depth)
			loop = jen.For(jen.List(jen.Id("_"), e()).Op(":=").Range().Add(x())).Block(
				appendValue(w.Elem, e, depth+1)...)
		}
		return []jen.Code{jen.If(x().Op("==").Nil()).Block(appendTo(wr("AppendNil").Call(jen.Id("b")))).Else().Block(
			appendTo(wr("AppendArrayLen").Call(jen.Id("b"), jen.Len(x()))),
			loop,
		)}
	case wireMap:
		k, e := numbered("k", depth), numbered("e", depth)
		loop := append(scoped(appendValue(w.Key, k, depth+1)),
			scoped(appendValue(w.Elem, e, depth+1))...)
		return []jen.Code{jen.If(x().Op("==").Nil()).Block(appendTo(wr("AppendNil").Call(jen.Id("b")))).Else().Block(
			appendTo(wr("AppendMapLen").Call(jen.Id("b"), jen.Len(x()))),
			jen.For(jen.List(k(), e()).Op(":=").Range().Add(x())).Block(loop...),
		)}
	case wirePointer:
		var write []jen.Code
		if w.Elem.Kind == wireStruct {
			write = []jen.Code{appendTo(jen.Id(w.Elem.Func.Append()).Call(jen.Id("b"), x()))}
		} else {
			write = appendValue(w.Elem, deref(x), depth+1)
		}
		return []jen.Code{jen.If(x().Op("==").Nil()).Block(appendTo(wr("AppendNil").Call(jen.Id("b")))).Else().Block(write...)}
	case wireStruct:
		return []jen.Code{appendTo(jen.Id(w.Func.Append()).Call(jen.Id("b"), jen.Op("&").Add(x())))}
	}
	panic("unreachable")
}

// readStruct is the body of a read function (emitCodecFunc): it reads
// the struct x points to, of type typ, from a map of its fields or from an
// array of all of them in order, as msgpack's reflection reads it; whole
// is the struct as an assignable value (*x). Each key, or each position of
// the array, becomes the index of a field, so each field's reading is
// written once for both forms.
func readStruct(plan *codecPlan, x, whole expr, typ jen.Code) []jen.Code {
	const depth = 0
	n, k, a, i, f := numbered("n", depth), numbered("k", depth), numbered("a", depth), numbered("i", depth), numbered("f", depth)
	var keys, cases []jen.Code
	for at, fc := range plan.Fields {
		var read []jen.Code
		if fc.Wire == nil {
			read = []jen.Code{jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(wr("ReadValue")).Call(jen.Id("b"), jen.Op("&").Add(field(x, fc.Field)())), jen.Err().Op("!=").Nil()).Block(readFailed())}
		} else {
			read = readValue(fc.Wire, field(x, fc.Field), depth+1)
		}
		keys = append(keys, jen.Case(jen.Lit(fc.Key)).Block(f().Op("=").Lit(at)))
		cases = append(cases, jen.Case(jen.Lit(at)).Block(read...))
	}
	keys = append(keys, jen.Default().Block(f().Op("=").Lit(-1)))
	cases = append(cases, jen.Default().Block(
		jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Add(wr("Skip")).Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(readFailed()),
	))
	return []jen.Code{
		jen.Var().Add(n()).Int(),
		jen.Var().Add(a()).Bool(),
		jen.If(jen.List(n(), a(), jen.Id("b"), jen.Err()).Op("=").Add(wr("ReadStructLen")).Call(jen.Id("b"), jen.Lit(len(plan.Fields))), jen.Err().Op("!=").Nil()).Block(readFailed()),
		jen.If(n().Op("<").Lit(0)).Block(whole().Op("=").Add(typ).Values()).Else().Block(
			jen.For(i().Op(":=").Range().Add(n())).Block(
				f().Op(":=").Add(i()),
				jen.If(jen.Op("!").Add(a())).Block(
					jen.Var().Add(k()).Index().Byte(),
					readInto(k(), "ReadStringBytes"),
					jen.Switch(jen.String().Call(k())).Block(keys...),
				),
				jen.Switch(f()).Block(cases...),
			),
		),
	}
}

// readFailed is what a read function returns on an error: no rest, and
// the error as the wire package gave it, unwrapped, as the codec always
// returned it (the runtime wraps it in ErrDecode with the key).
func readFailed() jen.Code { return jen.Return(jen.Nil(), jen.Err()) }

// readInto is `if dst, b, err = wire.fn(b); err != nil { return nil, err }`.
func readInto(dst jen.Code, fn string) jen.Code {
	return jen.If(jen.List(dst, jen.Id("b"), jen.Err()).Op("=").Add(wr(fn)).Call(jen.Id("b")), jen.Err().Op("!=").Nil()).Block(readFailed())
}

// readValue reads a value of type w into x, with variables numbered by
// depth; the caller gives it a scope of its own (see scoped).
func readValue(w *wireType, x expr, depth int) []jen.Code {
	switch w.Kind {
	case wireBasicKind:
		if types.Identical(w.Type, w.Basic.Result) {
			return []jen.Code{readInto(x(), w.Basic.Read)}
		}
		t := numbered("x", depth)
		return []jen.Code{
			jen.Var().Add(t()).Add(typeCode(w.Basic.Result)),
			readInto(t(), w.Basic.Read),
			x().Op("=").Add(convertTo(t(), w.Basic.Result, w.Type)),
		}
	case wireSlice, wireMap:
		n, s := numbered("n", depth), numbered("s", depth)
		fn := "ReadArrayLen"
		var fill jen.Code
		if w.Kind == wireSlice {
			i := numbered("i", depth)
			fill = jen.For(i().Op(":=").Range().Add(s())).Block(
				readValue(w.Elem, index(s, i), depth+1)...)
		} else {
			fn = "ReadMapLen"
			k, e := numbered("k", depth), numbered("e", depth)
			loop := []jen.Code{jen.Var().Add(k()).Add(typeCode(w.Key.Type))}
			loop = append(loop, scoped(readValue(w.Key, k, depth+1))...)
			loop = append(loop, jen.Var().Add(e()).Add(typeCode(w.Elem.Type)))
			loop = append(loop, scoped(readValue(w.Elem, e, depth+1))...)
			loop = append(loop, s().Index(k()).Op("=").Add(e()))
			fill = jen.For(jen.Range().Add(n())).Block(loop...)
		}
		return []jen.Code{
			jen.Var().Add(n()).Int(),
			readInto(n(), fn),
			jen.If(n().Op("<").Lit(0)).Block(x().Op("=").Nil()).Else().Block(
				s().Op(":=").Make(typeCode(w.Type), n()),
				fill,
				x().Op("=").Add(s()),
			),
		}
	case wirePointer:
		p := numbered("p", depth)
		elem := w.Type.Underlying().(*types.Pointer).Elem()
		var read []jen.Code
		if w.Elem.Kind == wireStruct {
			read = readCall(w.Elem.Func, p())
		} else {
			read = readValue(w.Elem, deref(p), depth+1)
		}
		return []jen.Code{jen.If(jen.List(jen.Id("rest"), jen.Id("ok")).Op(":=").Add(wr("ReadNil")).Call(jen.Id("b")), jen.Id("ok")).Block(
			x().Op("=").Nil(),
			jen.Id("b").Op("=").Id("rest"),
		).Else().Block(append(append([]jen.Code{p().Op(":=").New(typeCode(elem))},
			read...),
			x().Op("=").Add(p()))...)}
	case wireStruct:
		return readCall(w.Func, jen.Op("&").Add(x()))
	}
	panic("unreachable")
}

// readCall reads the struct ptr points to with its type's read function.
func readCall(fn *codecFunc, ptr jen.Code) []jen.Code {
	return []jen.Code{jen.If(jen.List(jen.Id("b"), jen.Err()).Op("=").Id(fn.Read()).Call(jen.Id("b"), ptr), jen.Err().Op("!=").Nil()).Block(readFailed())}
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
