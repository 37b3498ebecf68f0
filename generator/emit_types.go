package generator

import (
	"go/types"

	"github.com/dave/jennifer/jen"
)

// typeCode writes t as Go source. Named types of other packages go through
// Qual, so jennifer imports them under the name the model chose.
func typeCode(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Id(t.Name())
	case *types.Named:
		return withTypeArgs(qualName(t.Obj()), t.TypeArgs())
	case *types.Alias:
		return withTypeArgs(qualName(t.Obj()), t.TypeArgs())
	case *types.TypeParam:
		return jen.Id(t.Obj().Name())
	case *types.Pointer:
		return jen.Op("*").Add(typeCode(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(typeCode(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(typeCode(t.Elem()))
	case *types.Map:
		return jen.Map(typeCode(t.Key())).Add(typeCode(t.Elem()))
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return jen.Chan().Op("<-").Add(typeCode(t.Elem()))
		case types.RecvOnly:
			return jen.Op("<-").Chan().Add(typeCode(t.Elem()))
		}
		return jen.Chan().Add(typeCode(t.Elem()))
	case *types.Signature:
		return jen.Func().Add(signatureCode(t))
	case *types.Struct:
		fields := make([]jen.Code, t.NumFields())
		for i := range t.NumFields() {
			f := t.Field(i)
			if f.Embedded() {
				fields[i] = typeCode(f.Type())
			} else {
				fields[i] = jen.Id(f.Name()).Add(typeCode(f.Type()))
			}
		}
		return jen.Struct(fields...)
	case *types.Interface:
		var items []jen.Code
		for i := range t.NumEmbeddeds() {
			items = append(items, typeCode(t.EmbeddedType(i)))
		}
		for i := range t.NumExplicitMethods() {
			m := t.ExplicitMethod(i)
			items = append(items, jen.Id(m.Name()).Add(signatureCode(m.Type().(*types.Signature))))
		}
		return jen.Interface(items...)
	case *types.Union:
		var terms []jen.Code
		for i := range t.Len() {
			term := t.Term(i)
			if term.Tilde() {
				terms = append(terms, jen.Op("~").Add(typeCode(term.Type())))
			} else {
				terms = append(terms, typeCode(term.Type()))
			}
		}
		return jen.Union(terms...)
	}
	panic("typeCode: unexpected type " + t.String())
}

// qualName writes a type name, qualified when it belongs to another
// package. Predeclared names (error, any) have no package.
func qualName(obj *types.TypeName) *jen.Statement {
	if obj.Pkg() == nil {
		return jen.Id(obj.Name())
	}
	return jen.Qual(obj.Pkg().Path(), obj.Name())
}

// withTypeArgs appends the type arguments of an instance, if any.
func withTypeArgs(name *jen.Statement, args *types.TypeList) jen.Code {
	if args.Len() == 0 {
		return name
	}
	codes := make([]jen.Code, args.Len())
	for i := range args.Len() {
		codes[i] = typeCode(args.At(i))
	}
	return name.Types(codes...)
}

// signatureCode writes the parameters and results of a function type.
func signatureCode(sig *types.Signature) *jen.Statement {
	tuple := func(tu *types.Tuple, variadic bool) []jen.Code {
		codes := make([]jen.Code, tu.Len())
		for i := range tu.Len() {
			v := tu.At(i)
			var tc jen.Code = typeCode(v.Type())
			if variadic && i == tu.Len()-1 {
				tc = jen.Op("...").Add(typeCode(v.Type().(*types.Slice).Elem()))
			}
			if v.Name() != "" {
				codes[i] = jen.Id(v.Name()).Add(tc)
			} else {
				codes[i] = tc
			}
		}
		return codes
	}
	s := jen.Params(tuple(sig.Params(), sig.Variadic())...)
	switch res := sig.Results(); {
	case res.Len() == 1 && res.At(0).Name() == "":
		s.Add(typeCode(res.At(0).Type()))
	case res.Len() > 0:
		s.Params(tuple(res, false)...)
	}
	return s
}
