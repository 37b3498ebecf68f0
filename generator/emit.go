package generator

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"
)

// emit renders the file of one package: per entity, sorted by type name,
// the repository with its loader options, its key function or key struct,
// its guard, and its msgpack codec's methods; then the codec functions, a
// pair per struct type, the clone functions and the guard on the types
// they copy.
func emit(pkg *pkgModel) ([]byte, error) {
	f := jen.NewFilePathName(pkg.Path, pkg.Name)
	f.HeaderComment(Header[len("// "):])
	for path, imp := range pkg.Imports {
		if imp.Renamed {
			f.ImportAlias(path, imp.Name)
		} else {
			f.ImportName(path, imp.Name)
		}
	}
	for _, e := range pkg.Entities {
		if e.Collection != nil {
			emitCollection(f, e)
			continue
		}
		emitRepoType(f, e)
		emitConstructor(f, e)
		emitLoader(f, e)
		emitBatchLoader(f, e)
		emitGet(f, e)
		emitView(f, e)
		emitGetMany(f, e)
		emitSet(f, e)
		emitDel(f, e)
		emitChanges(f, e)
		emitBloom(f, e)
		emitStats(f, e)
		emitHistory(f, e)
		emitClose(f, e)
		emitKey(f, e)
		emitKeyGuard(f, e)
		emitCodec(f, e)
	}
	for _, fn := range pkg.Codecs {
		emitCodecFunc(f, fn)
	}
	for _, c := range pkg.Clones {
		emitClone(f, c)
	}
	emitShapeGuard(f, pkg.Guards)
	emitWireShapes(f, pkg.Entities)

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", pkg.Path, err)
	}
	// jennifer formats already. Formatting again makes the bytes
	// independent of its choices, and imports.Process also puts the
	// standard library imports in a group of their own, as gofmt users
	// write them; with FormatOnly it neither adds nor resolves imports.
	out, err := imports.Process(filepath.Base(pkg.Output), buf.Bytes(), &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", pkg.Path, err)
	}
	return out, nil
}

// emitWireShapes records the wire shape of each entity's values at the
// end of the file, for the next run to compare with (shape.go).
func emitWireShapes(f *jen.File, entities []*entity) {
	lines := []string{
		"// The wire shape of each entity's values, which the next run of hotkeygen",
		"// compares with, refusing a change the build generated from it cannot read",
		"// while both run (docs/changing-structs.md).",
		"//",
	}
	for _, e := range entities {
		lines = append(lines, e.Shape.record()...)
	}
	f.Comment(strings.Join(lines, "\n"))
}

// rt refers to a name of the runtime package.
func rt(name string) *jen.Statement { return jen.Qual(runtimePath, name) }

// expr builds an expression afresh on each call: jennifer statements grow
// in place, so one must never be used twice. The emitters pass the parts
// of values they copy, encode or decode as exprs, and build on them with
// field, index and deref.
type expr func() *jen.Statement

// id is the variable name.
func id(name string) expr { return func() *jen.Statement { return jen.Id(name) } }

// field is x.name.
func field(x expr, name string) expr {
	return func() *jen.Statement { return x().Dot(name) }
}

// index is x[i].
func index(x, i expr) expr {
	return func() *jen.Statement { return x().Index(i()) }
}

// deref is *x.
func deref(x expr) expr {
	return func() *jen.Statement { return jen.Op("*").Add(x()) }
}

// ptrType writes *T, the type an entity's values are handed over as.
func ptrType(e *entity) *jen.Statement { return jen.Op("*").Add(typeCode(e.Type)) }

// valueParam declares v *T, the parameter of the methods that take a value.
func valueParam(e *entity) *jen.Statement { return jen.Id("v").Add(ptrType(e)) }

// docWidth is the width doc comments are wrapped to, "// " included.
const docWidth = 80

// doc writes a doc comment, wrapped at word boundaries to docWidth; "\n"
// in text starts a new line. jennifer would write a comment holding
// newlines as /* */, which is not how Go code is documented. Text must not
// hold a word starting with "//": wrapped to the start of a line, gofmt
// would take it for a directive and move it.
func doc(f *jen.File, format string, args ...any) {
	for _, line := range wrap(fmt.Sprintf(format, args...), docWidth-len("// ")) {
		f.Comment(line)
	}
}

// wrap splits text into lines of at most width bytes, breaking between
// words; a longer word gets a line of its own.
func wrap(text string, width int) []string {
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case len(line)+1+len(w) <= width:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
		lines = append(lines, line)
	}
	return lines
}
