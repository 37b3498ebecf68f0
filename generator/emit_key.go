package generator

import (
	"github.com/dave/jennifer/jen"
)

// intDigits is the most bytes an integer takes in decimal, with its sign.
const intDigits = 20

// emitKey writes what turns an entity's key into its Redis key: the
// function <Name>Key for a single-field key, the struct <Name>Key and its
// String method for a composite one.
func emitKey(f *jen.File, e *entity) {
	if e.Composite() {
		emitKeyType(f, e)
	} else {
		emitKeyFunc(f, e)
	}
}

// emitKeyFunc writes <Name>Key, the runtime's Glue.Key for a single-field
// key: it takes the field's own type, which is what the cache is keyed by.
func emitKeyFunc(f *jen.File, e *entity) {
	p := e.Params[0]
	doc(f, "%s returns the Redis key of the %s identified by %s: the template %q filled in, exactly as the repository builds it.%s", e.KeyName(), e.TypeName(), p.Name, e.Template, escapeDoc(e.Params))
	f.Func().Id(e.KeyName()).Params(jen.Id(p.Name).Add(typeCode(p.Type))).String().Block(
		keyBody(e, paramArg)...,
	)
}

// emitKeyType writes the struct <Name>Key, which the cache is keyed by when
// the key has several fields: a comparable value holding the fields, in
// template order, with their declared types. Its String method is the
// runtime's Glue.Key.
func emitKeyType(f *jen.File, e *entity) {
	fields := make([]jen.Code, len(e.Params))
	for i, p := range e.Params {
		fields[i] = jen.Id(p.Field).Add(typeCode(p.Type))
	}
	doc(f, "%s identifies one %s: the fields of its key template %q.", e.KeyName(), e.TypeName(), e.Template)
	f.Type().Id(e.KeyName()).Struct(fields...)

	doc(f, "String returns the Redis key of k, %q filled in.%s", e.Template, escapeDoc(e.Params))
	f.Func().Params(jen.Id("k").Id(e.KeyName())).Id(keyMethod).Params().String().Block(
		keyBody(e, keyFieldArg)...,
	)
}

// escapeDoc is the sentence key builders add when params, the parts they
// write, include strings, whose values are escaped.
func escapeDoc(params []*param) string {
	for _, p := range params {
		if p.Kind == keyString {
			return " String parts are percent-escaped: see runtime.AppendKeyString."
		}
	}
	return ""
}

// keyBody builds the Redis key from the values val gives for the key
// fields, with one allocation for the buffer and one for the string, without
// fmt: it runs on every read that is not a local hit. String parts go
// through runtime.AppendKeyString (see keySpecial); the capacity counts
// them unescaped, which is exact for the common value that needs no
// escaping.
func keyBody(e *entity, val func(*param) *jen.Statement) []jen.Code {
	return partsBody(keySpecial(e), e.Key, val)
}

// partsBody builds a string of parts as keyBody does, escaping string
// parts' bytes in special.
func partsBody(special string, parts []keyPart, val func(*param) *jen.Statement) []jen.Code {
	fixed := 0
	var lens []jen.Code
	body := []jen.Code{nil} // the buffer, once its capacity is known
	for _, part := range parts {
		b := jen.Id("b").Op("=")
		p := part.Param
		switch {
		case p == nil:
			fixed += len(part.Lit)
			b.Append(jen.Id("b"), jen.Lit(part.Lit).Op("..."))
		case p.Kind == keyString:
			lens = append(lens, jen.Len(val(p)))
			b.Add(rt("AppendKeyString")).Call(jen.Id("b"), convert(p, val(p), "string"), jen.Lit(special))
		case p.Kind == keyInt:
			fixed += intDigits
			b.Qual("strconv", "AppendInt").Call(jen.Id("b"), convert(p, val(p), "int64"), jen.Lit(10))
		case p.Kind == keyUint:
			fixed += intDigits
			b.Qual("strconv", "AppendUint").Call(jen.Id("b"), convert(p, val(p), "uint64"), jen.Lit(10))
		}
		body = append(body, b)
	}
	capacity := jen.Lit(fixed)
	for _, l := range lens {
		capacity = capacity.Op("+").Add(l)
	}
	body[0] = jen.Id("b").Op(":=").Make(jen.Index().Byte(), jen.Lit(0), capacity)
	return append(body, jen.Return(jen.String().Call(jen.Id("b"))))
}

// convert writes v, the value of p, converted to the basic type to, unless
// it already has that type.
func convert(p *param, v *jen.Statement, to string) *jen.Statement {
	if p.Exact {
		return v
	}
	return jen.Id(to).Call(v)
}

// emitKeyGuard writes a function that stops compiling when a key field
// changes type, the way stringer guards its constants: the key function or
// struct and the methods would otherwise keep taking the old type.
func emitKeyGuard(f *jen.File, e *entity) {
	body := []jen.Code{jen.Var().Id("v").Add(typeCode(e.Type))}
	for _, p := range e.Params {
		// The alias puts staleName in the compiler's message.
		body = append(body, jen.Block(
			jen.Type().Id(staleName).Op("=").Add(typeCode(p.Type)),
			jen.Var().Id("_").Id(staleName).Op("=").Id("v").Dot(p.Field),
		))
	}
	if col := e.Collection; col != nil {
		body = append(body, jen.Block(
			jen.Type().Id(staleName).Op("=").Add(typeCode(col.Field.Type)),
			jen.Var().Id("_").Id(staleName).Op("=").Id("v").Dot(col.Field.Field),
		))
		if col.Expires != "" {
			body = append(body, jen.Block(
				jen.Type().Id(staleName).Op("=").Qual("time", "Time"),
				jen.Var().Id("_").Id(staleName).Op("=").Id("v").Dot(col.Expires),
			))
		}
	}
	// One line, however long, as stringer writes its guard comment.
	f.Commentf("A compile error here means a key field of %s changed type: re-run go generate.", e.TypeName())
	f.Func().Id("_").Params().Block(body...)
}
