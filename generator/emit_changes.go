package generator

import (
	"github.com/dave/jennifer/jen"
)

// emitChanges writes what changes=on adds: Mark<Name>Changed, the typed
// face of runtime.Cache.MarkChanged, and With<Name>SyncHook, of
// runtime.WithSyncHook. Both take keys as the cache holds them, K or the
// key struct, so they need no adapter.
func emitChanges(f *jen.File, e *entity) {
	if !e.Changes {
		return
	}
	typ := e.TypeName()
	doc(f, "%s records that the rows of %s changed in the database, in one round trip to Redis. The sync worker of every repository with a loader reloads them, writes them to Redis (or deletes the keys of rows that are gone) and hands them to the sync hook; an id marked again before it is synced is synced once, after its last mark.", e.MarkChanged(), e.ManyParam)
	f.Func().Add(recv(e)).Id(e.MarkChanged()).Params(
		ctxParam(),
		jen.Id(e.ManyParam).Op("...").Add(keyType(e)),
	).Error().Block(
		jen.Return(jen.Id("r").Dot("c").Dot("MarkChanged").Call(jen.Id("ctx"), jen.Id(e.ManyParam).Op("..."))),
	)

	doc(f, "%s gives the sync worker a function that receives every batch of %s values it synced, by key: the row, or nil when it is gone, as to feed a search index. An error returns the batch to the buffer, to be synced again.", e.SyncHook(), typ)
	f.Func().Id(e.SyncHook()).Params(
		jen.Id("hook").Func().Params(
			ctxParam(),
			jen.Id("rows").Map(keyType(e)).Add(ptrType(e)),
		).Error(),
	).Add(rt("Option")).Block(
		jen.Return(rt("WithSyncHook").Call(jen.Id("hook"))),
	)
}

// emitBloom writes what bloom=on adds: Warm<Name>Bloom, the typed face of
// runtime.Cache.WarmBloom.
func emitBloom(f *jen.File, e *entity) {
	if !e.Bloom {
		return
	}
	doc(f, "%s adds every key %s yields to the Bloom filter in front of the loader, a pipeline per thousand, then marks the filter ready: only from then on are reads of absent keys answered without the loader. %s should walk every row of the database's table; rows created afterwards reach the filter when written with %s, loaded, or synced. It returns how many keys it added.", e.WarmBloom(), e.ManyParam, e.ManyParam, e.Set())
	f.Func().Add(recv(e)).Id(e.WarmBloom()).Params(
		ctxParam(),
		jen.Id(e.ManyParam).Qual("iter", "Seq").Types(keyType(e)),
	).Params(jen.Int(), jen.Error()).Block(
		jen.Return(jen.Id("r").Dot("c").Dot("WarmBloom").Call(jen.Id("ctx"), jen.Id(e.ManyParam))),
	)
}
