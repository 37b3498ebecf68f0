package generator

import (
	"fmt"
	"go/types"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// emitClone writes a clone function: a copy of *v, then each part of the
// copy that would share memory with v replaced by a copy of its own.
func emitClone(f *jen.File, fn *cloneFunc) {
	body := []jen.Code{
		jen.If(jen.Id("v").Op("==").Nil()).Block(jen.Return(jen.Nil())),
		jen.Id("c").Op(":=").Op("*").Id("v"),
	}
	for _, fc := range fn.Fields {
		body = append(body, copyCode(field(id("c"), fc.Name), field(id("v"), fc.Name), fc.Copy, 0)...)
	}
	body = append(body, jen.Return(jen.Op("&").Id("c")))

	text := fmt.Sprintf("%s returns a deep copy of v: changing anything reachable from the copy leaves v as it was.", fn.Name)
	if len(fn.Shared) > 0 {
		text += fmt.Sprintf(" It cannot copy, and so shares with v: %s.", joinAnd(fn.Shared))
	}
	if fn.Recursive {
		text += fmt.Sprintf(" %s is recursive, so v must not hold a pointer cycle.", types.TypeString(fn.Type, qualifier(fn.Type.Obj().Pkg())))
	}
	doc(f, "%s", text)
	f.Func().Id(fn.Name).Params(jen.Id("v").Op("*").Add(typeCode(fn.Type))).Op("*").Add(typeCode(fn.Type)).Block(body...)
}

// local names a variable of a nested block: i, i1, i2...
func local(base string, depth int) expr {
	if depth == 0 {
		return id(base)
	}
	return id(base + strconv.Itoa(depth))
}

// copyCode returns the statements that make dst, which holds a plain copy
// of src, a deep copy of it. src is read first; everything after reads dst,
// which by then holds the same values in memory of its own.
func copyCode(dst, src expr, cp *copyPlan, depth int) []jen.Code {
	if x := copyExpr(src, cp); x != nil {
		return []jen.Code{dst().Op("=").Add(x)}
	}
	switch cp.Kind {
	case copyPointer:
		d := local("d", depth)
		block := []jen.Code{d().Op(":=").Add(deref(src)())}
		if cp.Elem != nil {
			block = append(block, copyCode(d, d, cp.Elem, depth+1)...)
		}
		block = append(block, dst().Op("=").Op("&").Add(d()))
		return []jen.Code{jen.If(src().Op("!=").Nil()).Block(block...)}
	case copySlice:
		i := local("i", depth)
		return []jen.Code{
			dst().Op("=").Qual("slices", "Clone").Call(src()),
			jen.For(i().Op(":=").Range().Add(dst())).Block(
				copyCode(index(dst, i), index(dst, i), cp.Elem, depth+1)...,
			),
		}
	case copyMap:
		k, e := local("k", depth), local("e", depth)
		var block []jen.Code
		if x := copyExpr(e, cp.Elem); x != nil {
			block = []jen.Code{index(dst, k)().Op("=").Add(x)}
		} else {
			block = append(copyCode(e, e, cp.Elem, depth+1), index(dst, k)().Op("=").Add(e()))
		}
		return []jen.Code{
			dst().Op("=").Qual("maps", "Clone").Call(src()),
			jen.For(jen.List(k(), e()).Op(":=").Range().Add(dst())).Block(block...),
		}
	case copyArray:
		i := local("i", depth)
		return []jen.Code{
			jen.For(i().Op(":=").Range().Add(dst())).Block(
				copyCode(index(dst, i), index(dst, i), cp.Elem, depth+1)...,
			),
		}
	case copyStruct:
		var stmts []jen.Code
		for _, fc := range cp.Fields {
			stmts = append(stmts, copyCode(field(dst, fc.Name), field(dst, fc.Name), fc.Copy, depth)...)
		}
		return stmts
	}
	panic(fmt.Sprintf("copyCode: unexpected copy kind %d", cp.Kind))
}

// copyExpr returns a single expression that deep-copies src, when there is
// one: slices.Clone and maps.Clone of plain elements, and clone functions,
// which return nil for nil.
func copyExpr(src expr, cp *copyPlan) *jen.Statement {
	switch {
	case cp.Kind == copySlice && cp.Elem == nil:
		return jen.Qual("slices", "Clone").Call(src())
	case cp.Kind == copyMap && cp.Elem == nil:
		return jen.Qual("maps", "Clone").Call(src())
	case cp.Kind == copyFunc:
		return jen.Op("*").Id(cp.Func.Name).Call(jen.Op("&").Add(src()))
	case cp.Kind == copyPointer && cp.Elem != nil && cp.Elem.Kind == copyFunc:
		return jen.Id(cp.Elem.Func.Name).Call(src())
	}
	return nil
}

// emitShapeGuard writes a function that stops compiling when a type the
// clone functions rely on changes, as stringer guards its constants: a
// field added with a slice in it would otherwise be shared silently.
// Converting a pointer checks the whole underlying type, field by field,
// into a local type named staleName, so that the compiler's own message
// says what to do.
func emitShapeGuard(f *jen.File, guards []*types.Named) {
	if len(guards) == 0 {
		return
	}
	body := make([]jen.Code, len(guards))
	for i, t := range guards {
		body[i] = jen.Block(
			jen.Type().Id(staleName).Add(typeCode(t.Underlying())),
			jen.Id("_").Op("=").Parens(jen.Op("*").Id(staleName)).Call(jen.New(typeCode(t))),
		)
	}
	f.Comment("A compile error here means a type the clone functions copy changed: re-run go generate.")
	f.Func().Id("_").Params().Block(body...)
}

// staleName names the local types of the guards. A guard that stops
// compiling puts it in the compiler's message ("cannot convert new(Item)
// (value of type *Item) to type *generated_code_is_stale__run_go_generate"),
// which is all a user sees of the generated file at that point.
const staleName = "generated_code_is_stale__run_go_generate"
