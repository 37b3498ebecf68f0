package generator

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
	"github.com/hotkeygen/hotkeygen/internal/keyver"
	"github.com/hotkeygen/hotkeygen/runtime"
)

// This file keeps the wire shape of each entity's values: the msgpack keys
// of its fields and their kinds, its version, its layout and its key
// template. The generated file records the shape it was generated for
// (wireDirective lines), and the next run compares the new shape with it,
// the way buf breaking compares a protobuf schema with the last commit:
// during a rolling deploy the build generated from the recorded shape
// still runs, and reads what the new one writes.
//
// A change that build reads fine is accepted: a field added or dropped (the
// codec skips keys it does not know, and leaves missing fields alone), a
// codec, a Go field renamed under the same msgpack key, an omitempty. A
// change it cannot read is refused at the field, unless the version goes
// up: a field's kind (an int becoming a string, a scalar a slice, a struct
// a map, a time an int), a still-read field's msgpack key, the key
// template, the layout. A higher version is always accepted: its keys are
// its own (versionedKey). A lower one is refused: the build of the higher
// version may still be running, on keys the lower one's values never reach.

// wireDirective starts each line of the record.
const wireDirective = "//hotkeygen:wire "

// shape is the wire shape of one entity.
type shape struct {
	Type    string // the annotated struct's name, which identifies it between runs
	Version int
	// Format is the record's: shapeFormat for a shape made from the
	// source, 1 for a record written before pointers and positions were
	// recorded (legacy).
	Format int
	Key    string // the key template as written, before versionedKey
	Layout string // "string", or "hash field=F" with " expires=E"
	Fields []wireField
	// Line is where the record holds the entity, for a record that does
	// not read; zero for a shape made from the source.
	Line int
}

// wireField is one value in the msgpack of the entity: a field of the
// struct or of a struct inside it.
type wireField struct {
	Go  string // the Go path from the entity: "Where.X", "Items[].Name"
	Key string // the msgpack path: "where.x", "items[].name"; "#2" is the third field of an as_array struct
	// Kind is wireKindOf's: int64, str, bin, bool, time, any, []int32,
	// map[str]{}, ...; *int64 when a nil may be written where a
	// decoder of int64 reads none.
	Kind string
	// named is Key with each as_array position given its field's name,
	// as a legacy record keys it; not recorded.
	named string
	Pos   token.Position
}

// shapeFormat is the format of the records this generator writes: 2 marks
// the nils a pointer writes (*time) and an as_array struct's positions
// (#0).
const shapeFormat = 2

// shapeOf returns the wire shape of the entity t annotates, which the
// model has already checked: a struct of encodable fields.
func shapeOf(in *pkgInput, t target, named *types.Named) *shape {
	s := t.Spec
	sh := &shape{Type: named.Obj().Name(), Version: s.Version, Format: shapeFormat, Key: s.Key.Raw, Layout: s.Layout}
	if s.Layout == runtime.LayoutHash {
		sh.Layout += " field=" + s.Field
		if s.Expires != "" {
			sh.Layout += " expires=" + s.Expires
		}
	}
	w := shapeWalker{fset: in.Fset, shape: sh}
	w.fields(named.Underlying().(*types.Struct), sh.Type+".", "", "", []*types.Named{named})
	return sh
}

type shapeWalker struct {
	fset  *token.FileSet
	shape *shape
}

// fields adds the fields msgpack writes of st, as its reflection does:
// exported fields and embedded ones, not tagged "-", an embedded struct
// without a tag name inlined. The fields of an as_array struct are keyed
// by their position, which is all its array says of them: two fields
// swapped, or one dropped before others, are keys changed.
func (w *shapeWalker) fields(st *types.Struct, goPath, keyPath, namedPath string, stack []*types.Named) {
	at := 0
	w.walk(st, goPath, keyPath, namedPath, asArray(st), &at, stack)
}

func (w *shapeWalker) walk(st *types.Struct, goPath, keyPath, namedPath string, positional bool, at *int, stack []*types.Named) {
	for i := range st.NumFields() {
		f := st.Field(i)
		tag := st.Tag(i)
		if !stored(f, tag) {
			continue
		}
		name := msgpackName(tag)
		if f.Embedded() && name == "" && !encodesItself(elemOrSelf(f.Type())) {
			if inner, ok := structOf(f.Type()); ok {
				w.walk(inner, goPath, keyPath, namedPath, positional, at, stack)
				continue
			}
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		key := name
		if positional {
			key = "#" + strconv.Itoa(*at)
		}
		*at++
		w.value(goPath+f.Name(), keyPath+key, namedPath+name, f.Type(), w.fset.Position(f.Pos()), stack)
	}
}

// asArray reports a struct msgpack writes as an array: its _msgpack field
// says as_array.
func asArray(st *types.Struct) bool {
	for i := range st.NumFields() {
		if st.Field(i).Name() == "_msgpack" {
			_, opts, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("msgpack"), ",")
			for o := range strings.SplitSeq(opts, ",") {
				if o == "as_array" || o == "asArray" {
					return true
				}
			}
		}
	}
	return false
}

// value adds the field at goPath and keyPath, of type t, and the fields
// of the structs its value holds.
func (w *shapeWalker) value(goPath, keyPath, namedPath string, t types.Type, pos token.Position, stack []*types.Named) {
	kind, st, named, path := wireKindOf(t)
	w.shape.Fields = append(w.shape.Fields, wireField{Go: goPath, Key: keyPath, Kind: kind, named: namedPath, Pos: pos})
	if st == nil {
		return
	}
	for _, n := range stack {
		if named != nil && types.Identical(n, named) {
			return // a recursive type: its fields are listed once, above
		}
	}
	if named != nil {
		stack = append(stack[:len(stack):len(stack)], named)
	}
	w.fields(st, goPath+path+".", keyPath+path+".", namedPath+path+".", stack)
}

// wireKindOf names how msgpack writes a value of t, in the words the
// record uses: the kinds one msgpack decoder reads into each other are one
// word (every integer is int, every float float). A struct's kind is {},
// its fields listed after it; st is that struct, named its type when it
// has one, and path what leads from the field to it: "[]" for a slice's
// elements, "[*]" for a map's values.
func wireKindOf(t types.Type) (kind string, st *types.Struct, named *types.Named, path string) {
	t = types.Unalias(t)
	if isTime(t) {
		return "time", nil, nil, ""
	}
	if n, ok := t.(*types.Named); ok {
		switch {
		case declares(n, "EncodeMsgpack"), declares(n, "MarshalMsgpack"):
			return "custom:" + types.TypeString(n, nil), nil, nil, ""
		case declares(n, "MarshalBinary"):
			return "bin", nil, nil, ""
		case declares(n, "MarshalText"):
			return "str", nil, nil, ""
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "bool", nil, nil, ""
		case u.Info()&types.IsInteger != 0 || u.Info()&types.IsFloat != 0:
			return numberKind(u), nil, nil, ""
		case u.Info()&types.IsString != 0:
			return "str", nil, nil, ""
		}
		return u.Name(), nil, nil, ""
	case *types.Pointer:
		kind, st, named, path := wireKindOf(u.Elem())
		if nilable(kind) {
			return kind, st, named, path
		}
		return "*" + kind, st, named, path
	case *types.Slice:
		return listKind(u.Elem())
	case *types.Array:
		return listKind(u.Elem())
	case *types.Map:
		k, _, _, _ := wireKindOf(u.Key())
		v, st, named, path := wireKindOf(u.Elem())
		return "map[" + k + "]" + v, st, named, "[*]" + path
	case *types.Struct:
		n, _ := t.(*types.Named)
		return "{}", u, n, ""
	case *types.Interface:
		return "any", nil, nil, ""
	}
	return t.String(), nil, nil, ""
}

// numberKind is the kind of a number: its width and sign, which decide
// what each build's decoder makes of the other's values (a value one
// writes may not fit the other: misread), int and uint as 64 bits.
func numberKind(b *types.Basic) string {
	switch b.Kind() {
	case types.Int8:
		return "int8"
	case types.Int16:
		return "int16"
	case types.Int32:
		return "int32"
	case types.Uint8:
		return "uint8"
	case types.Uint16:
		return "uint16"
	case types.Uint32:
		return "uint32"
	case types.Uint, types.Uint64, types.Uintptr:
		return "uint64"
	case types.Float32:
		return "float32"
	case types.Float64:
		return "float64"
	}
	return "int64" // int, int64
}

// legacyKind reports a kind of a record written before numbers had
// widths: "int" for every integer, "float" for every float.
func legacyKind(kind, now string) bool {
	return kind == "int" && (strings.HasPrefix(now, "int") || strings.HasPrefix(now, "uint")) ||
		kind == "float" && strings.HasPrefix(now, "float")
}

// sameFamily reports two number kinds of one family, integers or floats,
// which misread compares; any other pair of words is two kinds.
func sameFamily(a, b string) bool {
	integer := func(k string) bool {
		return k == "int8" || k == "int16" || k == "int32" || k == "int64" || k == "uint8" || k == "uint16" || k == "uint32" || k == "uint64"
	}
	return integer(a) && integer(b) || (a == "float32" || a == "float64") && (b == "float32" || b == "float64")
}

// misread says how a build's decoder reads the values of a number kind
// written by another build, of kind from, into a field of kind to: "" when
// every value reads back as written, else an example of one that does
// not. Both decoders convert as msgpack does (wire.ReadInt64, ReadUint64,
// ReadFloat64): integers are truncated to the field's width, and their
// sign reinterpreted; floats rounded.
func misread(from, to string) string {
	if from == to {
		return ""
	}
	type num struct {
		float  bool
		signed bool
		bits   int
	}
	parse := func(k string) num {
		n := num{float: strings.HasPrefix(k, "float"), signed: !strings.HasPrefix(k, "uint")}
		n.bits, _ = strconv.Atoi(strings.TrimLeft(k, "fintulao")) // sameFamily checked the word
		return n
	}
	f, t := parse(from), parse(to)
	switch {
	case f.float: // float32 to float64 is exact
		if f.bits > t.bits {
			return "0.1 reads as 0.10000000149011612"
		}
		return ""
	case f.signed && !t.signed:
		return "-5 reads as " + strconv.FormatUint(uint64(1)<<t.bits-5, 10)
	case !f.signed && t.signed && f.bits >= t.bits:
		return strconv.FormatUint(uint64(1)<<(t.bits-1), 10) + " reads as -" + strconv.FormatUint(uint64(1)<<(t.bits-1), 10)
	case f.bits > t.bits:
		return "1<<" + strconv.Itoa(t.bits) + " reads as 0"
	}
	return ""
}

// kindChange judges a field whose kind changes from old to kind, as each
// build's decoder reads the other's values: lost says what a value one
// build writes reads as in the other's (empty when every value reads back
// as written), and why what makes it safe, or what a deploy should know.
// The kinds are compared word by word, so a slice's or a map's elements
// are judged as a field is: a number's width and sign (misread, both
// ways), str and bin (both decoders read both), a pointer's nil (nilRead),
// a number of a record older than widths (legacyKind). A type that
// encodes itself is its own methods' business.
func kindChange(old, kind string) (lost, why string) {
	if strings.Contains(old, "custom:") || strings.Contains(kind, "custom:") {
		return "", "a type that encodes itself writes what its methods write, which no record sees: each build's decoder must read the other's values, or version= keeps them apart"
	}
	ow, nw := kindWords.FindAllString(old, -1), kindWords.FindAllString(kind, -1)
	var whys []string
	for i, j := 0, 0; i < len(ow) || j < len(nw); i, j = i+1, j+1 {
		op, np := i < len(ow) && ow[i] == "*", j < len(nw) && nw[j] == "*"
		if op {
			i++
		}
		if np {
			j++
		}
		if i >= len(ow) || j >= len(nw) {
			return "not the same kind", ""
		}
		o, n := ow[i], nw[j]
		if op != np {
			reader, dir := n, "the new build reads the running build's nils" // the running build's pointer writes them
			if np {
				reader, dir = o, "the running build reads the new build's nils"
			}
			if l := nilRead(reader); l != "" {
				return dir + " " + l, ""
			}
			whys = append(whys, dir+" as zero values")
		}
		switch {
		case o == n:
		case legacyKind(o, n):
			whys = append(whys, "the record predates number widths")
		case (o == "str" || o == "bin") && (n == "str" || n == "bin"):
			whys = append(whys, "both builds' decoders read str and bin alike")
		case !sameFamily(o, n):
			return "not the same kind", ""
		default:
			if l := misread(o, n); l != "" {
				return "the new build misreads the running build's values: " + l, ""
			}
			if l := misread(n, o); l != "" {
				return "the running build misreads the new build's values: " + l, ""
			}
		}
	}
	return "", strings.Join(slices.Compact(whys), "; ")
}

// nilRead says what a decoder of the kind word reads a nil as, when that
// is not its zero value: a time's decoder fails on one, as msgpack's does.
func nilRead(word string) string {
	if word == "time" {
		return "and fails on each (msgpack: invalid code=c0)"
	}
	return ""
}

// nilable reports a kind whose values may be nil already: a pointer to it
// writes nothing new.
func nilable(kind string) bool {
	return kind == "bin" || kind == "any" || strings.HasPrefix(kind, "[]") || strings.HasPrefix(kind, "map[") || strings.HasPrefix(kind, "*")
}

// kindWords splits a kind into its words and marks: "map[str][]int64" is
// map [ str ] [ ] int64.
var kindWords = regexp.MustCompile(`[a-z0-9]+|[^a-z0-9]`)

// listKind is the kind of a slice or an array of elem: bytes are bin.
func listKind(elem types.Type) (string, *types.Struct, *types.Named, string) {
	if b, ok := types.Unalias(elem).(*types.Basic); ok && b.Kind() == types.Byte {
		return "bin", nil, nil, ""
	}
	k, st, named, path := wireKindOf(elem)
	return "[]" + k, st, named, "[]" + path
}

// structOf returns the struct t or *t is.
func structOf(t types.Type) (*types.Struct, bool) {
	st, ok := elemOrSelf(t).Underlying().(*types.Struct)
	return st, ok
}

// elemOrSelf returns what t points to, or t when it is no pointer.
func elemOrSelf(t types.Type) types.Type {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		return types.Unalias(p.Elem())
	}
	return t
}

// record writes sh as the lines of the generated file that the next run
// reads back (readShapes).
func (sh *shape) record() []string {
	head := fmt.Sprintf("%s%s version=%d layout=%s key=%s", wireDirective, sh.Type, sh.Version, strconv.Quote(sh.Layout), strconv.Quote(sh.Key))
	if sh.Format > 1 {
		head += " format=" + strconv.Itoa(sh.Format)
	}
	lines := []string{head}
	for _, f := range sh.Fields {
		lines = append(lines, wireDirective+f.Go+" "+quoteIfNeeded(f.Key)+" "+f.Kind)
	}
	return lines
}

// quoteIfNeeded quotes a msgpack key that would not read back as one word.
func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"\\") || strconv.Quote(s) != `"`+s+`"` {
		return strconv.Quote(s)
	}
	return s
}

// readShapes reads the record of the generated file content, by type
// name. A line it cannot read is an error at that line of path: the file
// was edited by hand, and what it recorded is lost.
func readShapes(path string, content []byte) (map[string]*shape, ErrorList) {
	shapes := map[string]*shape{}
	var errs ErrorList
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(nil, len(content)+1)
	var cur *shape
	for n := 1; sc.Scan(); n++ {
		rest, ok := strings.CutPrefix(sc.Text(), wireDirective)
		if !ok {
			continue
		}
		bad := func(why string) {
			errs.Add(token.Position{Filename: path, Line: n, Column: 1}, annotations.RuleWireRecordEdited, fmt.Sprintf("the recorded wire shape does not read (%s): this line was edited by hand; restore the generated file from version control, or delete it to record the shape anew", why))
		}
		if first, _, _ := strings.Cut(rest, " "); !strings.Contains(first, ".") { // an entity's line: a field's Go path has a dot
			sh, err := readEntityLine(rest)
			var newer newerFormat
			if errors.As(err, &newer) {
				errs.Add(token.Position{Filename: path, Line: n, Column: 1}, annotations.RuleWireRecordNewer, fmt.Sprintf("the recorded wire shape is of format %d, newer than this hotkeygen writes (%d): generate with the hotkeygen that wrote it, or a newer one", int(newer), shapeFormat))
				cur = nil
				continue
			}
			if err != nil {
				bad(err.Error())
				cur = nil
				continue
			}
			sh.Line = n
			shapes[sh.Type] = sh
			cur = sh
			continue
		}
		goPath, rest, _ := strings.Cut(rest, " ")
		key, kind, err := readWord(rest)
		switch {
		case err != nil:
			bad(err.Error())
		case kind == "" || strings.Contains(kind, " "):
			bad("no kind")
		case cur == nil || !strings.HasPrefix(goPath, cur.Type+"."):
			bad("a field outside its entity")
		default:
			cur.Fields = append(cur.Fields, wireField{Go: goPath, Key: key, Kind: kind})
		}
	}
	return shapes, errs
}

// readEntityLine reads `Type version=N layout="..." key="..."`.
func readEntityLine(line string) (*shape, error) {
	typ, rest, _ := strings.Cut(line, " ")
	v, rest, _ := strings.Cut(strings.TrimPrefix(rest, "version="), " ")
	version, err := strconv.Atoi(v)
	if err != nil || version < 1 {
		return nil, fmt.Errorf("version %q", v)
	}
	layout, rest, err := readWord(strings.TrimPrefix(rest, "layout="))
	if err != nil {
		return nil, fmt.Errorf("layout: %v", err)
	}
	key, rest, err := readWord(strings.TrimPrefix(rest, "key="))
	if err != nil {
		return nil, fmt.Errorf("key: %q", rest)
	}
	format := 1 // a record older than formats
	if rest != "" {
		f, err := strconv.Atoi(strings.TrimPrefix(rest, "format="))
		switch {
		case err != nil || f < 2 || !strings.HasPrefix(rest, "format="):
			return nil, fmt.Errorf("format: %q", rest)
		case f > shapeFormat:
			return nil, newerFormat(f)
		}
		format = f
	}
	return &shape{Type: typ, Version: version, Format: format, Layout: layout, Key: key}, nil
}

// newerFormat is a record written by a newer hotkeygen, in its format.
type newerFormat int

func (f newerFormat) Error() string { return "format " + strconv.Itoa(int(f)) }

// readWord reads a word, quoted or not, and returns it and what follows
// the space after it.
func readWord(s string) (word, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		word, rest, _ = strings.Cut(s, " ")
		return word, rest, nil
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", err
	}
	word, _ = strconv.Unquote(q)
	return word, strings.TrimPrefix(s[len(q):], " "), nil
}

// recordOf returns the recorded shape sh is judged against: its type's,
// or, for a type renamed in Go, the record of a type no longer annotated
// whose key template is sh's: the keys both builds read and write. A
// rename changes nothing on the wire; a rename and another change in one
// commit are judged as the other change alone. A type whose key template
// is new as well shares no key with the record: it starts its own.
func recordOf(recorded map[string]*shape, annotated map[string]bool, sh *shape) (*shape, string) {
	if old := recorded[sh.Type]; old != nil {
		return old, ""
	}
	var gone []*shape
	for _, old := range recorded {
		if !annotated[old.Type] && old.Key == sh.Key {
			gone = append(gone, old)
		}
	}
	if len(gone) == 0 {
		return nil, ""
	}
	slices.SortFunc(gone, func(a, b *shape) int { return strings.Compare(a.Type, b.Type) })
	old := *gone[0]
	old.Fields = slices.Clone(old.Fields)
	for j, f := range old.Fields {
		old.Fields[j].Go = sh.Type + strings.TrimPrefix(f.Go, old.Type)
	}
	return &old, fmt.Sprintf("%s: judged against the record of %s, renamed in Go", sh.Type, old.Type)
}

// checkShape compares the new shape of an entity with the recorded one
// (nil when none is) and reports every change the build of the recorded
// shape cannot read, each where it was made; warns, each change it can
// but that a deploy should know of (printed without -v), and notes, for
// -v, the rest.
func checkShape(old, sh *shape, spec *annotations.Spec) (errs, warns ErrorList, notes []string) {
	if old == nil {
		return nil, nil, nil
	}
	fix := fmt.Sprintf("set version=%d on %s's //hotkey:cache line to give the new shape keys of its own (docs/changing-structs.md)", old.Version+1, sh.Type)
	at := func(option string) token.Position {
		if a, ok := spec.Arg(option); ok {
			return a.Pos
		}
		return spec.Pos
	}
	switch {
	case sh.Version < old.Version:
		errs.Add(at("version"), annotations.RuleWireVersionLowered, fmt.Sprintf("version=%d goes back from version %d, which the generated file records for %s: a build of version %d may still be running, and values of version %d are older than its; keep version=%d, or go higher",
			sh.Version, old.Version, sh.Type, old.Version, sh.Version, old.Version))
		return errs, nil, nil
	case sh.Version > old.Version:
		return nil, nil, []string{fmt.Sprintf("%s: version %d, on keys of its own; version %d's expire by their TTL", sh.Type, sh.Version, old.Version)}
	}
	if sh.Key != old.Key {
		errs.Add(at("key"), annotations.RuleWireTemplateChanged, fmt.Sprintf("key=%s changes %s's key template from %s, which a running build still reads and writes; %s", sh.Key, sh.Type, old.Key, fix))
	}
	if sh.Layout != old.Layout {
		errs.Add(at("layout"), annotations.RuleWireLayoutChanged, fmt.Sprintf("%s's layout changes from %q to %q, which a running build cannot read; %s", sh.Type, old.Layout, sh.Layout, fix))
	}
	if old.Format < shapeFormat {
		sh = sh.legacy()
		notes = append(notes, fmt.Sprintf("%s: recorded before pointers and as_array positions were; compared without them, and recorded with them from now on", sh.Type))
	}
	oldByKey, oldByGo := map[string]wireField{}, map[string]wireField{}
	for _, f := range old.Fields {
		oldByKey[f.Key], oldByGo[f.Go] = f, f
	}
	newKeys := map[string]bool{}
	var added []wireField
	for _, f := range sh.Fields {
		newKeys[f.Key] = true
		if o, ok := oldByGo[f.Go]; ok && o.Key != f.Key && !underChanged(f.Key, sh, old) {
			// The key moved, to one that may have been another field's
			// (two fields swapping tags, or places in an as_array struct):
			// each build reads the other's value of one into the other.
			keep := fmt.Sprintf("keep the key with a tag (msgpack:%q), or ", lastSegment(o.Key))
			if strings.HasPrefix(lastSegment(o.Key), "#") {
				keep = "put the field back in its place, add fields after the last, or " // an as_array struct: the key is the place
			}
			errs.Add(f.Pos, annotations.RuleWireKeyMoved, fmt.Sprintf("%s: its msgpack key changes from %s to %s, so the running build stops seeing what this one writes, and this one what it writes; %s%s", f.Go, quoteIfNeeded(o.Key), quoteIfNeeded(f.Key), keep, fix))
			continue
		}
		if o, ok := oldByKey[f.Key]; ok {
			if o.Kind == f.Kind || underChanged(f.Key, sh, old) {
				continue
			}
			switch lost, why := kindChange(o.Kind, f.Kind); {
			case lost == "not the same kind":
				errs.Add(f.Pos, annotations.RuleWireKindChanged, fmt.Sprintf("%s: its msgpack kind changes from %s to %s, which the running build cannot decode (nor this one its values); %s", f.Go, o.Kind, f.Kind, fix))
			case lost != "":
				errs.Add(f.Pos, annotations.RuleWireKindChanged, fmt.Sprintf("%s: its msgpack kind changes from %s to %s: %s; %s", f.Go, o.Kind, f.Kind, lost, fix))
			case strings.Contains(why, "predates"):
				notes = append(notes, fmt.Sprintf("%s: recorded as %s, now as %s: %s", f.Go, o.Kind, f.Kind, why))
			default:
				warns.Add(f.Pos, annotations.RuleWireKindChanged, fmt.Sprintf("warning: %s: its msgpack kind changes from %s to %s, accepted: %s", f.Go, o.Kind, f.Kind, why))
			}
			continue
		}
		added = append(added, f)
	}
	var dropped []wireField
	for _, f := range old.Fields {
		if _, renamed := fieldByGo(sh, f.Go); !newKeys[f.Key] && !renamed {
			dropped = append(dropped, f)
		}
	}
	if len(errs) == 0 && (len(added) > 0 || len(dropped) > 0) {
		var changes []string
		if len(added) > 0 {
			changes = append(changes, "adds "+goPaths(added))
		}
		if len(dropped) > 0 {
			changes = append(changes, "drops "+goPaths(dropped))
		}
		warns.Add(spec.Pos, annotations.RuleWireFieldsChanged, fmt.Sprintf("warning: %s: version %d, compatible with the recorded shape: %s; while both builds run, every write of a value (Set, HSet, a sync of the change buffer) stores only the fields its build knows, erasing those only the other has; version= keeps them apart (docs/changing-structs.md)",
			sh.Type, sh.Version, strings.Join(changes, " and ")))
		for _, a := range added {
			for _, d := range dropped {
				if a.Kind == d.Kind && place(sh, a.Go) == place(old, d.Go) {
					warns.Add(a.Pos, annotations.RuleWireRenameSuspected, fmt.Sprintf("warning: %s takes the place of %s, with its kind: if it is %s renamed in Go, the values stored under the key %s read as zero in this build, and this build's in the running one; to keep them, keep the key with a tag (msgpack:%q)",
						a.Go, d.Go, lastSegment(d.Go), quoteIfNeeded(d.Key), lastSegment(d.Key)))
				}
			}
		}
	}
	if len(errs) > 0 {
		return errs, nil, nil
	}
	return nil, warns, notes
}

// legacy returns sh as a record of format 1 has it: no pointer marks,
// an as_array struct's fields by name.
func (sh *shape) legacy() *shape {
	l := *sh
	l.Fields = make([]wireField, len(sh.Fields))
	for i, f := range sh.Fields {
		f.Key, f.Kind = f.named, strings.ReplaceAll(f.Kind, "*", "")
		l.Fields[i] = f
	}
	return &l
}

// place is where the field at goPath sits in sh: its parent's Go path and
// its index among the parent's fields.
func place(sh *shape, goPath string) string {
	parent := goPath[:strings.LastIndexByte(goPath, '.')+1]
	at := 0
	for _, f := range sh.Fields {
		rest, ok := strings.CutPrefix(f.Go, parent)
		switch {
		case f.Go == goPath:
			return parent + "#" + strconv.Itoa(at)
		case ok && !strings.Contains(rest, "."):
			at++
		}
	}
	return ""
}

func goPaths(fs []wireField) string {
	paths := make([]string, len(fs))
	for i, f := range fs {
		paths[i] = f.Go
	}
	return strings.Join(paths, ", ")
}

// underChanged reports that a parent of the msgpack path key changed
// kind between the two shapes, which one error, at the parent, says.
func underChanged(key string, sh, old *shape) bool {
	for i := len(key) - 1; i > 0; i-- {
		if key[i] != '.' {
			continue
		}
		parent := key[:i] // a slice's or a map's elements hang off the field: "items[]", "attrs[*][]"
		for strings.HasSuffix(parent, "[]") || strings.HasSuffix(parent, "[*]") {
			parent = strings.TrimSuffix(strings.TrimSuffix(parent, "[]"), "[*]")
		}
		n, nok := fieldByKey(sh, parent)
		o, ook := fieldByKey(old, parent)
		if !nok || !ook || n.Kind != o.Kind {
			return true
		}
	}
	return false
}

func fieldByKey(sh *shape, key string) (wireField, bool) {
	for _, f := range sh.Fields {
		if f.Key == key {
			return f, true
		}
	}
	return wireField{}, false
}

func fieldByGo(sh *shape, goPath string) (wireField, bool) {
	for _, f := range sh.Fields {
		if f.Go == goPath {
			return f, true
		}
	}
	return wireField{}, false
}

// lastSegment is the last key of a msgpack path: the tag a field needs to
// keep it.
func lastSegment(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// versionedKey returns the first literal of a key template for version
// (keyver.Prefix): "user:" becomes "user:v2:" for version 2.
func versionedKey(lit string, version int) string { return keyver.Prefix(lit, version) }
