package generator

import (
	"github.com/dave/jennifer/jen"
)

// intDigits is the most bytes an integer takes in decimal, with its sign.
const intDigits = 20

// emitKeyFunc writes <Name>Key, which builds the Redis key with one
// allocation for the buffer and one for the string, without fmt: it runs on
// every read.
func emitKeyFunc(f *jen.File, e *entity) {
	params := make([]jen.Code, len(e.Params))
	for i, p := range e.Params {
		params[i] = jen.Id(p.Name).Add(typeCode(p.Type))
	}
	fixed := 0
	var lens []jen.Code
	body := []jen.Code{nil} // the buffer, once its capacity is known
	for _, part := range e.Key {
		b := jen.Id("b").Op("=")
		p := part.Param
		switch {
		case p == nil:
			fixed += len(part.Lit)
			b.Append(jen.Id("b"), jen.Lit(part.Lit).Op("..."))
		case p.Kind == keyString:
			lens = append(lens, jen.Len(jen.Id(p.Name)))
			b.Append(jen.Id("b"), convert(p, "string").Op("..."))
		case p.Kind == keyInt:
			fixed += intDigits
			b.Qual("strconv", "AppendInt").Call(jen.Id("b"), convert(p, "int64"), jen.Lit(10))
		case p.Kind == keyUint:
			fixed += intDigits
			b.Qual("strconv", "AppendUint").Call(jen.Id("b"), convert(p, "uint64"), jen.Lit(10))
		}
		body = append(body, b)
	}
	capacity := jen.Lit(fixed)
	for _, l := range lens {
		capacity = capacity.Op("+").Add(l)
	}
	body[0] = jen.Id("b").Op(":=").Make(jen.Index().Byte(), jen.Lit(0), capacity)
	body = append(body, jen.Return(jen.String().Call(jen.Id("b"))))

	doc(f, "%s returns the Redis key of the %s identified by %s: the template %q filled in, exactly as the repository builds it.", e.KeyFunc(), e.Type.Obj().Name(), paramList(e), e.Template)
	f.Func().Id(e.KeyFunc()).Params(params...).String().Block(body...)
}

// convert writes p's parameter converted to the basic type to, unless it
// already has that type.
func convert(p *param, to string) *jen.Statement {
	if p.Exact {
		return jen.Id(p.Name)
	}
	return jen.Id(to).Call(jen.Id(p.Name))
}

// emitKeyGuard writes a function that stops compiling when a key field
// changes type, the way stringer guards its constants: the key function
// and the methods would otherwise keep taking the old type.
func emitKeyGuard(f *jen.File, e *entity) {
	body := []jen.Code{jen.Var().Id("v").Add(typeCode(e.Type))}
	for _, p := range e.Params {
		body = append(body, jen.Var().Id("_").Add(typeCode(p.Type)).Op("=").Id("v").Dot(p.Field))
	}
	// One line, however long, as stringer writes its guard comment.
	f.Commentf("A compile error here means a key field of %s changed type: re-run go generate.", e.Type.Obj().Name())
	f.Func().Id("_").Params().Block(body...)
}
