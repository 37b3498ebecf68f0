package generator

import (
	"github.com/dave/jennifer/jen"
)

// emitLoader writes With<Name>Loader, the typed face of runtime.WithLoader.
// Its function takes the key the way Get<Name> does, field by field, so a
// loader reads like the query it runs; for a composite key the option
// adapts it to the key struct the cache is keyed by.
func emitLoader(f *jen.File, e *entity) {
	doc(f, "%s reads through to the source of truth: on a Redis miss, %s and %s call load, write its result to Redis and return it. load returns an error wrapping runtime.ErrNotFound for an absent row.", e.Loader(), e.Get(), e.GetMany())
	result := []jen.Code{ptrType(e), jen.Error()}
	f.Func().Id(e.Loader()).Params(
		jen.Id("load").Func().Params(keyParams(e)...).Params(result...),
	).Add(rt("Option")).Block(
		jen.Return(rt("WithLoader").Call(loaderArg(e, result))),
	)
}

// loaderArg is the function a loader option hands the runtime: load
// itself, or for a composite key an adapter from the key struct to
// load's parameters, field by field. result is what load returns.
func loaderArg(e *entity, result []jen.Code) jen.Code {
	if !e.Composite() {
		return jen.Id("load")
	}
	args := []jen.Code{jen.Id("ctx")}
	for _, p := range e.Params {
		args = append(args, keyFieldArg(p))
	}
	return jen.Func().Params(ctxParam(), jen.Id("k").Add(keyType(e))).Params(result...).Block(
		jen.Return(jen.Id("load").Call(args...)),
	)
}

// emitBatchLoader writes With<Names>Loader, the typed face of
// runtime.WithBatchLoader: it takes the keys as the cache holds them, K or
// the key struct, so it needs no adapter.
func emitBatchLoader(f *jen.File, e *entity) {
	doc(f, "%s loads many rows at once for %s; it returns the rows it found. Without it, %s calls the function given to %s key by key; given alone, it loads %s's misses too, one key at a time.", e.BatchLoader(), e.GetMany(), e.GetMany(), e.Loader(), e.Get())
	f.Func().Id(e.BatchLoader()).Params(
		jen.Id("load").Func().Params(manyParams(e)...).Params(
			jen.Map(keyType(e)).Add(ptrType(e)), jen.Error(),
		),
	).Add(rt("Option")).Block(
		jen.Return(rt("WithBatchLoader").Call(jen.Id("load"))),
	)
}
