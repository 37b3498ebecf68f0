package generator

import (
	"github.com/dave/jennifer/jen"
)

// emitCollection writes the repository of a collection entity
// (layout=hash), a typed face on runtime.Collection: one Redis hash per
// key, items under the field their field= gives. Each method is named
// after the Redis command it runs.
func emitCollection(f *jen.File, e *entity) {
	emitCollectionType(f, e)
	emitCollectionCtor(f, e)
	emitCollectionLoader(f, e)
	emitCollectionMethods(f, e)
	emitStats(f, e)
	emitHistory(f, e)
	emitClose(f, e)
	emitKey(f, e)
	emitFieldFunc(f, e)
	emitKeyGuard(f, e)
	emitCodec(f, e)
}

// fieldType writes F, the type the items of a collection are keyed by.
func fieldType(e *entity) jen.Code { return typeCode(e.Collection.Field.Type) }

// collectionMap writes map[F]*T, a whole collection of items.
func collectionMap(e *entity) *jen.Statement { return jen.Map(fieldType(e)).Add(ptrType(e)) }

func emitCollectionType(f *jen.File, e *entity) {
	doc(f, "%s reads and writes collections of %s items in Redis: one hash per key %q, each item under the field its %s gives, serving the hot collections from memory.", e.Repo(), e.TypeName(), e.Template, e.Collection.Field.Field)
	f.Type().Id(e.Repo()).Struct(
		jen.Id("c").Op("*").Add(rt("Collection")).Types(keyType(e), fieldType(e), typeCode(e.Type)),
	)
}

func emitCollectionCtor(f *jen.File, e *entity) {
	fields := []jen.Code{
		jen.Id("Key").Op(":").Add(keyFunc(e)),
		jen.Id("Prefix").Op(":").Lit(e.Key[0].Lit),
		jen.Id("Clone").Op(":").Id(e.Clone.Name),
	}
	fields = append(fields, versionGlue(e)...)
	fields = append(fields, codecGlue(e)...)
	fields = append(fields,
		jen.Id("Owner").Op(":").Func().Params(valueParam(e)).Add(keyType(e)).Block(jen.Return(keyValue(e, fieldArg))),
		jen.Id("Field").Op(":").Func().Params(valueParam(e)).Add(fieldType(e)).Block(jen.Return(jen.Id("v").Dot(e.Collection.Field.Field))),
		jen.Id("FieldName").Op(":").Id(e.FieldName()),
	)
	if x := e.Collection.Expires; x != "" {
		fields = append(fields,
			jen.Id("Expires").Op(":").Func().Params(valueParam(e)).Qual("time", "Time").Block(jen.Return(jen.Id("v").Dot(x))),
			jen.Id("ExpiresKey").Op(":").Lit(e.Collection.ExpiresKey),
		)
	}
	doc(f, "%s returns a repository of collections of %s over rdb. The options annotated on %s are its defaults; opts override them. %s", e.Ctor(), e.TypeName(), e.TypeName(), ctorErrDoc)
	emitCtorBody(f, e, rt("NewCollection"), func(more ...jen.Code) jen.Code {
		return rt("CollectionGlue").Types(keyType(e), fieldType(e), typeCode(e.Type)).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, append(fields, more...)...)
	})
}

// emitCollectionLoader writes With<Names>Loader: load returns a key's
// whole collection, which is written back as its hash.
func emitCollectionLoader(f *jen.File, e *entity) {
	doc(f, "%s reads through to the source of truth: when a collection's hash is missing from Redis, load returns the whole collection, which is written back as the hash and returned. An empty collection, or an error wrapping runtime.ErrNotFound, is remembered as absent for null_ttl.", e.BatchLoader())
	result := []jen.Code{collectionMap(e), jen.Error()}
	f.Func().Id(e.BatchLoader()).Params(
		jen.Id("load").Func().Params(keyParams(e)...).Params(result...),
	).Add(rt("Option")).Block(
		jen.Return(rt("WithCollectionLoader").Call(loaderArg(e, result))),
	)
}

// emitCollectionMethods writes the reads and writes, each named after
// its Redis command.
func emitCollectionMethods(f *jen.File, e *entity) {
	typ, fp := e.TypeName(), e.Collection.Field
	key := keyValue(e, paramArg)
	withField := append(keyParams(e), jen.Id(fp.Name).Add(typeCode(fp.Type)))
	call := func(method string, args ...jen.Code) jen.Code {
		return jen.Return(jen.Id("r").Dot("c").Dot(method).Call(append([]jen.Code{jen.Id("ctx")}, args...)...))
	}
	expiry := ""
	if e.Collection.Expires != "" {
		expiry = " Items whose " + e.Collection.Expires + " has passed are left out, whatever Redis holds."
	}

	doc(f, "%s returns the collection stored under %s (HGETALL), keyed by %s: empty when there is none.%s A hot collection is served from memory. The map and its items are the caller's own to change.", e.HGetAll(), keyDoc(e), fp.Field, expiry)
	f.Func().Add(recv(e)).Id(e.HGetAll()).Params(keyParams(e)...).Params(collectionMap(e), jen.Error()).Block(call("HGetAll", key))

	doc(f, "%s returns the %s under the field %s gives in the collection of %s (HGET; from memory when the collection is hot), or an error wrapping runtime.ErrNotFound when there is none%s.", e.HGet(), typ, fp.Name, keyDoc(e), map[bool]string{true: " or it has expired", false: ""}[expiry != ""])
	f.Func().Add(recv(e)).Id(e.HGet()).Params(withField...).Params(ptrType(e), jen.Error()).Block(call("HGet", key, jen.Id(fp.Name)))

	writeDoc := "in one round trip: a script that runs HSET, removes the collection's expired items and moves the hash's TTL forward when the item would outlive it, never back. A caller that reads next sees the write, even when the collection is hot."
	doc(f, "%s stores v in the collection its key fields give, under the field its %s gives, %s", e.HSet(), fp.Field, writeDoc)
	f.Func().Add(recv(e)).Id(e.HSet()).Params(ctxParam(), valueParam(e)).Error().Block(call("HSet", jen.Id("v")))

	doc(f, "%s stores vs, of one collection or several, as %s does each, in one round trip: one script per collection, pipelined.", e.HSetMany(), e.HSet())
	f.Func().Add(recv(e)).Id(e.HSetMany()).Params(ctxParam(), jen.Id("vs").Index().Add(ptrType(e))).Error().Block(call("HSet", jen.Id("vs").Op("...")))

	doc(f, "%s deletes the %s under the field %s gives from the collection of %s (HDEL, in the script that also removes expired items).", e.HDel(), typ, fp.Name, keyDoc(e))
	f.Func().Add(recv(e)).Id(e.HDel()).Params(withField...).Error().Block(call("HDel", key, jen.Id(fp.Name)))

	doc(f, "%s deletes the whole collection of %s (DEL), in Redis and in memory.", e.DelAll(), keyDoc(e))
	f.Func().Add(recv(e)).Id(e.DelAll()).Params(keyParams(e)...).Error().Block(call("Del", key))

	doc(f, "%s returns the collections stored under each of %s, aligned with %s, as %s does: hot ones from memory, the rest with one pipeline of HGETALLs (per node, in parallel, on a cluster).", e.HGetAllMany(), e.ManyParam, e.ManyParam, e.HGetAll())
	f.Func().Add(recv(e)).Id(e.HGetAllMany()).Params(manyParams(e)...).Params(jen.Index().Add(collectionMap(e)), jen.Error()).Block(call("HGetAllMany", jen.Id(e.ManyParam)))
}

// emitFieldFunc writes <Name>Field, the hash field of an item: the
// field's value written as a key part is, escaped the same way.
func emitFieldFunc(f *jen.File, e *entity) {
	p := e.Collection.Field
	doc(f, "%s returns the hash field the %s whose %s is %s is stored under.%s", e.FieldName(), e.TypeName(), p.Field, p.Name, escapeDoc([]*param{p}))
	f.Func().Id(e.FieldName()).Params(jen.Id(p.Name).Add(typeCode(p.Type))).String().Block(
		partsBody(keySpecial(e), []keyPart{{Param: p}}, paramArg)...,
	)
}
