package generator

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dave/jennifer/jen"
)

// emitRepoType writes the repository type, a typed face on runtime.Cache.
func emitRepoType(f *jen.File, e *entity) {
	doc(f, "%s reads and writes %s values in Redis under the key %q, serving the hot ones from memory.", e.Repo(), e.TypeName(), e.Template)
	f.Type().Id(e.Repo()).Struct(
		jen.Id("c").Op("*").Add(rt("Cache")).Types(keyType(e), typeCode(e.Type)),
	)
}

// emitConstructor writes New<Name>Repo and MustNew<Name>Repo. The
// annotation's options become defaults that the caller's options follow,
// so the caller has the last word; they were validated when the code was
// generated, so an error comes from the caller's own options or client.
// The glue names the key's Redis key function and the clone function.
func emitConstructor(f *jen.File, e *entity) {
	doc(f, "%s returns a repository of %s values over rdb. The options annotated on %s are its defaults; opts override them. %s", e.Ctor(), e.TypeName(), e.TypeName(), ctorErrDoc)
	emitCtorBody(f, e, rt("New"), func(fields ...jen.Code) jen.Code {
		return rt("Glue").Types(keyType(e), typeCode(e.Type)).Values(append(glue(e), fields...)...)
	})
}

// ctorErrDoc says, in every constructor's doc, when it fails: a
// repository that cannot work is an error the caller handles, not the
// end of the process.
const ctorErrDoc = "It returns an error, and no repository, when opts contradict each other or the annotation (WithWarmQPS above hot_qps), a loader has the wrong type, or rdb cannot carry the invalidation (a *redis.Ring or *redis.AutoPipeliner needs invalidate=pubsub or off)."

// emitCtorBody writes the constructors of e's repository: New<Name>Repo,
// where newFn (runtime.New or NewCollection) builds its runtime value from
// the client, the glue (made by glue, given the fields to add to e's) and
// the caller's options; the annotation's travel in the glue as its
// Defaults, so that an error names the caller's option by its place among
// opts. And MustNew<Name>Repo beside it.
func emitCtorBody(f *jen.File, e *entity, newFn *jen.Statement, glue func(fields ...jen.Code) jen.Code) {
	defaults := make([]jen.Code, len(e.Options))
	for i, o := range e.Options {
		defaults[i] = rt(o.Func).Call(optionValue(o.Value))
	}
	f.Func().Id(e.Ctor()).Params(ctorParams()...).Params(jen.Op("*").Id(e.Repo()), jen.Error()).Block(
		jen.Id("defaults").Op(":=").Index().Add(rt("Option")).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, defaults...),
		jen.List(jen.Id("c"), jen.Err()).Op(":=").Add(newFn).Call(
			jen.Id("rdb"),
			glue(jen.Id("Defaults").Op(":").Id("defaults")),
			jen.Id("opts").Op("..."),
		),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Op("&").Id(e.Repo()).Values(jen.Dict{jen.Id("c"): jen.Id("c")}), jen.Nil()),
	)
	emitMustCtor(f, e)
}

// emitMustCtor writes MustNew<Name>Repo, New<Name>Repo that panics, as
// regexp.MustCompile is to Compile: for a repository built once, at
// start, from options fixed in the code.
func emitMustCtor(f *jen.File, e *entity) {
	doc(f, "%s is like %s but panics if the repository cannot be built. It simplifies building a repository once, at start, from options fixed in the code.", e.MustCtor(), e.Ctor())
	f.Func().Id(e.MustCtor()).Params(ctorParams()...).Op("*").Id(e.Repo()).Block(
		jen.List(jen.Id("r"), jen.Err()).Op(":=").Id(e.Ctor()).Call(jen.Id("rdb"), jen.Id("opts").Op("...")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Panic(jen.Err())),
		jen.Return(jen.Id("r")),
	)
}

// ctorParams declares the constructors' parameters.
func ctorParams() []jen.Code {
	return []jen.Code{
		jen.Id("rdb").Qual(redisPath, "UniversalClient"),
		jen.Id("opts").Op("...").Add(rt("Option")),
	}
}

// glue lists the fields of the repository's runtime.Glue: the key
// function, the clone function, the literal text every key starts with,
// for which invalidations are tracked, and the generated codec.
func glue(e *entity) []jen.Code {
	fields := []jen.Code{
		jen.Id("Key").Op(":").Add(keyFunc(e)),
		jen.Id("Clone").Op(":").Id(e.Clone.Name),
	}
	if len(e.Key) > 0 && e.Key[0].Param == nil {
		fields = append(fields, jen.Id("Prefix").Op(":").Lit(e.Key[0].Lit))
	}
	fields = append(fields, versionGlue(e)...)
	return append(fields, codecGlue(e)...)
}

// versionGlue lists the glue's Version field, for a version above 1:
// the keys are the version's own already, and the runtime names its Bloom
// filter and its stats after it.
func versionGlue(e *entity) []jen.Code {
	if e.Version <= 1 {
		return nil
	}
	return []jen.Code{jen.Id("Version").Op(":").Lit(e.Version)}
}

// codecGlue lists the glue's Encode and Decode fields: the generated
// codec's methods, or none when the entity has no codec.
func codecGlue(e *entity) []jen.Code {
	if e.Codec == nil {
		return nil
	}
	return []jen.Code{
		jen.Id("Encode").Op(":").Parens(ptrType(e)).Dot(appendMethod),
		jen.Id("Decode").Op(":").Parens(ptrType(e)).Dot(readMethod),
	}
}

// optionValue writes an option's argument the way a person would.
func optionValue(v any) jen.Code {
	switch v := v.(type) {
	case string:
		return jen.Lit(v)
	case time.Duration:
		n, unit := durationParts(v)
		switch {
		case unit == "":
			return jen.Lit(0)
		case n == 1:
			return jen.Qual("time", unit)
		}
		return jen.Lit(int(n)).Op("*").Qual("time", unit)
	case float64:
		return jen.Op(strconv.FormatFloat(v, 'g', -1, 64))
	case int:
		return jen.Lit(v)
	case bool:
		return jen.Lit(v)
	case runtimeConst:
		return rt(string(v))
	}
	panic(fmt.Sprintf("optionValue: unexpected %T", v))
}

// durationUnits are the units durations are written in, largest first.
var durationUnits = []struct {
	d    time.Duration
	name string
}{
	{time.Hour, "Hour"},
	{time.Minute, "Minute"},
	{time.Second, "Second"},
	{time.Millisecond, "Millisecond"},
	{time.Microsecond, "Microsecond"},
	{time.Nanosecond, "Nanosecond"},
}

// durationParts splits d into n * unit with the largest unit that divides
// it exactly, so 90m reads "90 * time.Minute" and 1.5s "1500 *
// time.Millisecond". Zero has no unit.
func durationParts(d time.Duration) (n int64, unit string) {
	if d == 0 {
		return 0, ""
	}
	for _, u := range durationUnits {
		if d%u.d == 0 {
			return int64(d / u.d), u.name
		}
	}
	panic("unreachable: every duration is a whole number of nanoseconds")
}

// keyParams declares the key parameters after ctx.
func keyParams(e *entity) []jen.Code {
	params := []jen.Code{ctxParam()}
	for _, p := range e.Params {
		params = append(params, jen.Id(p.Name).Add(typeCode(p.Type)))
	}
	return params
}

// keyType writes K, the type the cache is keyed by: the key field's own
// type, or the key struct.
func keyType(e *entity) jen.Code {
	if e.Composite() {
		return jen.Id(e.KeyName())
	}
	return typeCode(e.Params[0].Type)
}

// keyFunc refers to the function that turns K into the Redis key.
func keyFunc(e *entity) *jen.Statement {
	if e.Composite() {
		return jen.Id(e.KeyName()).Dot(keyMethod)
	}
	return jen.Id(e.KeyName())
}

// keyValue writes the K whose fields arg gives: the value itself, or a
// key struct literal with the fields in template order.
func keyValue(e *entity, arg func(*param) *jen.Statement) jen.Code {
	if !e.Composite() {
		return arg(e.Params[0])
	}
	fields := make([]jen.Code, len(e.Params))
	for i, p := range e.Params {
		fields[i] = jen.Id(p.Field).Op(":").Add(arg(p))
	}
	return jen.Id(e.KeyName()).Values(fields...)
}

// paramArg, fieldArg and keyFieldArg give a key field's value: the
// method's parameter, the field of the value v, or the field of the key
// struct k.
func paramArg(p *param) *jen.Statement    { return jen.Id(p.Name) }
func fieldArg(p *param) *jen.Statement    { return jen.Id("v").Dot(p.Field) }
func keyFieldArg(p *param) *jen.Statement { return jen.Id("k").Dot(p.Field) }

// ctxParam declares ctx, the first parameter of the generated methods and
// of the functions the options take.
func ctxParam() *jen.Statement { return jen.Id("ctx").Qual("context", "Context") }

// paramList names the parameters for doc comments: "tenant and num".
func paramList(e *entity) string {
	names := make([]string, len(e.Params))
	for i, p := range e.Params {
		names[i] = p.Name
	}
	return joinAnd(names)
}

func recv(e *entity) *jen.Statement {
	return jen.Params(jen.Id("r").Op("*").Id(e.Repo()))
}

// emitGet writes Get<Name>.
func emitGet(f *jen.File, e *entity) {
	typ := e.TypeName()
	doc(f, "%s returns the %s stored under %s, or an error wrapping runtime.ErrNotFound when there is none. The value is the caller's own to change: no other caller sees the change.", e.Get(), typ, keyDoc(e))
	f.Func().Add(recv(e)).Id(e.Get()).Params(keyParams(e)...).Params(ptrType(e), jen.Error()).Block(
		jen.Return(jen.Id("r").Dot("c").Dot("Get").Call(jen.Id("ctx"), keyValue(e, paramArg))),
	)
}

// emitView writes View<Name>, the read that lends the value: a hot key's
// read then costs the same whatever the value's size.
func emitView(f *jen.File, e *entity) {
	typ := e.TypeName()
	doc(f, "%s calls fn with the %s stored under %s, or returns an error wrapping runtime.ErrNotFound when there is none, as %s does, but lends the value instead of copying it: a hot key's read costs the same whatever the value's size. The value may be shared with every other reader, so fn must neither change it nor keep it, or anything it holds, after it returns; use %s for a value of your own. It returns fn's error.", e.View(), typ, keyDoc(e), e.Get(), e.Get())
	f.Func().Add(recv(e)).Id(e.View()).Params(append(keyParams(e), jen.Id("fn").Func().Params(ptrType(e)).Error())...).Error().Block(
		jen.Return(jen.Id("r").Dot("c").Dot("View").Call(jen.Id("ctx"), keyValue(e, paramArg), jen.Id("fn"))),
	)
}

// emitGetMany writes Get<Names>, the batch read. Its parameter is a slice
// of K, the type the cache is keyed by, so the runtime takes it as it is.
func emitGetMany(f *jen.File, e *entity) {
	typ, keys := e.TypeName(), e.ManyParam
	doc(f, "%s returns the %s stored under each of %s, aligned with %s: nil where there is none. Hot keys are served from memory and the rest are read from Redis in as few round trips as possible; with a loader, keys missing from Redis are loaded. Each value is the caller's own to change.", e.GetMany(), typ, keys, keys)
	f.Func().Add(recv(e)).Id(e.GetMany()).Params(manyParams(e)...).Params(jen.Index().Add(ptrType(e)), jen.Error()).Block(
		jen.Return(jen.Id("r").Dot("c").Dot("GetMany").Call(jen.Id("ctx"), jen.Id(keys))),
	)
}

// manyParams declares ctx and the slice of keys of the batch functions.
func manyParams(e *entity) []jen.Code {
	return []jen.Code{ctxParam(), jen.Id(e.ManyParam).Index().Add(keyType(e))}
}

// emitSet writes Set<Name>.
func emitSet(f *jen.File, e *entity) {
	fields := make([]string, len(e.Params))
	for i, p := range e.Params {
		fields[i] = p.Field
	}
	fieldsGive := "field gives"
	if len(fields) > 1 {
		fieldsGive = "fields give"
	}
	doc(f, "%s stores v under the key its %s %s, with the repository's TTL. A caller that reads the key next gets v, even when it is hot. A nil v is an error: %s deletes.", e.Set(), joinAnd(fields), fieldsGive, e.Del())
	f.Func().Add(recv(e)).Id(e.Set()).Params(
		ctxParam(),
		valueParam(e),
	).Error().Block(
		refuseNil(e, e.Set()),
		jen.Return(jen.Id("r").Dot("c").Dot("Set").Call(jen.Id("ctx"), keyValue(e, fieldArg), jen.Id("v"))),
	)
}

// refuseNil returns method's error for a nil v before its key fields are
// read: the runtime refuses a nil value too, but the key is built here
// first, and a nil dereference would end the process.
func refuseNil(e *entity, method string) jen.Code {
	msg := fmt.Sprintf("hotkey: %s: the %s is nil; call %s to delete it", method, e.TypeName(), e.Del())
	return jen.If(jen.Id("v").Op("==").Nil()).Block(
		jen.Return(jen.Qual("errors", "New").Call(jen.Lit(msg))),
	)
}

// emitDel writes Del<Name>.
func emitDel(f *jen.File, e *entity) {
	doc(f, "%s deletes the %s stored under %s, in Redis and in memory.", e.Del(), e.TypeName(), keyDoc(e))
	f.Func().Add(recv(e)).Id(e.Del()).Params(keyParams(e)...).Error().Block(
		jen.Return(jen.Id("r").Dot("c").Dot("Del").Call(jen.Id("ctx"), keyValue(e, paramArg))),
	)
}

// emitStats writes Stats.
func emitStats(f *jen.File, e *entity) {
	doc(f, "Stats returns a snapshot of the repository's counters and hot keys.")
	f.Func().Add(recv(e)).Id("Stats").Params().Add(rt("Stats")).Block(
		jen.Return(jen.Id("r").Dot("c").Dot("Stats").Call()),
	)
}

// emitHistory writes History.
func emitHistory(f *jen.File, e *entity) {
	doc(f, "History returns the repository's reads, local hits and Redis reads per second over the last ten minutes.")
	f.Func().Add(recv(e)).Id("History").Params().Index().Add(rt("Sample")).Block(
		jen.Return(jen.Id("r").Dot("c").Dot("History").Call()),
	)
}

// emitClose writes Close.
func emitClose(f *jen.File, e *entity) {
	doc(f, "Close stops the repository's background work. The Redis client stays open.")
	f.Func().Add(recv(e)).Id("Close").Params().Error().Block(
		jen.Return(jen.Id("r").Dot("c").Dot("Close").Call()),
	)
}

// keyDoc names the Redis key the parameters give, for doc comments:
// "UserKey(id)", or "the key tenant and num give".
func keyDoc(e *entity) string {
	if e.Composite() {
		return "the key " + paramList(e) + " give"
	}
	return e.KeyName() + "(" + e.Params[0].Name + ")"
}
