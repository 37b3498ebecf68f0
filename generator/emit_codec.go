package generator

import (
	"github.com/dave/jennifer/jen"
)

// checked is `if err := call; err != nil { return err }`.
func checked(call jen.Code) jen.Code {
	return jen.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
}

// present is the condition under which an omitempty field is written: the
// negation of msgpack's isEmptyValue for its type.
func present(fc *codecField) *jen.Statement {
	x := func() *jen.Statement { return jen.Id("v").Dot(fc.Field) }
	switch fc.Empty {
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

// emitEncode writes EncodeMsgpack, msgpack's CustomEncoder: the struct as a
// map of its fields, byte for byte what msgpack's reflection writes.
func emitEncode(f *jen.File, e *entity) {
	if e.Codec == nil {
		return
	}
	required := 0
	var count []jen.Code
	for _, fc := range e.Codec.Fields {
		if fc.Empty == emptyNever {
			required++
		} else {
			count = append(count, jen.If(present(fc)).Block(jen.Id("n").Op("++")))
		}
	}
	var body []jen.Code
	if len(count) == 0 {
		body = append(body, checked(jen.Id("enc").Dot("EncodeMapLen").Call(jen.Lit(required))))
	} else {
		body = append(body, jen.Id("n").Op(":=").Lit(required))
		body = append(body, count...)
		body = append(body, checked(jen.Id("enc").Dot("EncodeMapLen").Call(jen.Id("n"))))
	}
	for _, fc := range e.Codec.Fields {
		val := jen.Id("v").Dot(fc.Field)
		var write jen.Code
		switch s := fc.Scalar; {
		case s == nil:
			write = jen.Id("enc").Dot("Encode").Call(jen.Op("&").Add(val))
		case s.EncodeConv != "":
			write = jen.Id("enc").Dot(s.Encode).Call(jen.Id(s.EncodeConv).Call(val))
		default:
			write = jen.Id("enc").Dot(s.Encode).Call(val)
		}
		stmts := []jen.Code{checked(jen.Id("enc").Dot("EncodeString").Call(jen.Lit(fc.Key))), checked(write)}
		if fc.Empty == emptyNever {
			body = append(body, stmts...)
		} else {
			body = append(body, jen.If(present(fc)).Block(stmts...))
		}
	}
	body = append(body, jen.Return(jen.Nil()))

	doc(f, "EncodeMsgpack writes v as msgpack's reflection would, a map of its exported fields, without reflection for the fields of basic types. It implements msgpack.CustomEncoder.")
	f.Func().Params(jen.Id("v").Op("*").Add(typeCode(e.Type))).Id("EncodeMsgpack").
		Params(jen.Id("enc").Op("*").Qual(msgpackPath, "Encoder")).Error().Block(body...)
}

// emitDecode writes DecodeMsgpack, msgpack's CustomDecoder: it reads the
// map in any order, skips keys it does not know, and leaves fields the map
// lacks as they were, as msgpack's reflection does.
func emitDecode(f *jen.File, e *entity) {
	if e.Codec == nil {
		return
	}
	var cases []jen.Code
	for _, fc := range e.Codec.Fields {
		dst := jen.Id("v").Dot(fc.Field)
		var read []jen.Code
		switch s := fc.Scalar; {
		case s == nil:
			read = []jen.Code{checked(jen.Id("dec").Dot("Decode").Call(jen.Op("&").Add(dst)))}
		default:
			val := jen.Id("x")
			if s.DecodeConv != "" {
				val = jen.Id(s.DecodeConv).Call(jen.Id("x"))
			}
			read = []jen.Code{
				jen.List(jen.Id("x"), jen.Err()).Op(":=").Id("dec").Dot(s.Decode).Call(),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
				dst.Op("=").Add(val),
			}
		}
		cases = append(cases, jen.Case(jen.Lit(fc.Key)).Block(read...))
	}
	cases = append(cases, jen.Default().Block(checked(jen.Id("dec").Dot("Skip").Call())))

	doc(f, "DecodeMsgpack reads a map written by EncodeMsgpack or by msgpack's reflection into v, in any key order, skipping keys v has no field for. It implements msgpack.CustomDecoder.")
	f.Func().Params(jen.Id("v").Op("*").Add(typeCode(e.Type))).Id("DecodeMsgpack").
		Params(jen.Id("dec").Op("*").Qual(msgpackPath, "Decoder")).Error().Block(
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Id("dec").Dot("DecodeMapLen").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.If(jen.Id("n").Op("==").Lit(-1)).Block(
			jen.Op("*").Id("v").Op("=").Add(typeCode(e.Type)).Values(),
			jen.Return(jen.Nil()),
		),
		jen.Var().Id("kb").Add(rt("KeyBuf")),
		jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Id("n"), jen.Id("i").Op("++")).Block(
			jen.List(jen.Id("key"), jen.Err()).Op(":=").Add(rt("DecodeMsgpackKey")).Call(jen.Id("dec"), jen.Op("&").Id("kb")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Switch(jen.String().Call(jen.Id("key"))).Block(cases...),
		),
		jen.Return(jen.Nil()),
	)
}
