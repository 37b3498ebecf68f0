package generator

import (
	"cmp"
	"fmt"
	"go/token"
	"go/types"
	"maps"
	"slices"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// cloneFunc is a generated deep-copy function, clone<Type>(v *T) *T: it
// copies *v, then replaces every part a caller could reach and change
// through the copy (slices, maps, pointers, and what they hold) with a copy
// of its own. runtime.Cache hands every reader the result, so no reader
// can change what the next one gets.
type cloneFunc struct {
	Name string
	Type *types.Named
	// Fields are the fields to copy after *v, in declaration order.
	Fields []fieldCopy
	// Shared lists the parts left shared with the original, relative to
	// the type ("Extra (any)"), for the function's doc comment.
	Shared []string
	// Recursive is set when the type reaches itself: the function then
	// recurses, and a value holding a pointer cycle would not end.
	Recursive bool
}

// fieldCopy replaces the field Name of a shallow copy with a deep one.
type fieldCopy struct {
	Name string
	Copy *copyPlan
}

// copyKind says how a part of a shallow copy is made deep.
type copyKind int

const (
	// copyFunc calls a cloneFunc: dst = *Func(&src), or dst = Func(src)
	// under a copyPointer.
	copyFunc copyKind = iota
	// copyPointer points dst at a copy of *src; nil stays nil.
	copyPointer
	// copySlice gives dst its own backing array with slices.Clone (nil
	// and empty stay as they are), then copies each element.
	copySlice
	// copyMap gives dst its own map with maps.Clone (nil and empty stay
	// as they are), then copies each value.
	copyMap
	// copyArray copies each element of an array, which *v copied by
	// value.
	copyArray
	// copyStruct copies Fields of a struct without a name in place.
	copyStruct
)

// copyPlan is how one part of a value is copied. Elem, for pointers, slices,
// maps and arrays, copies what they hold; nil means a plain copy of the
// elements is already deep.
type copyPlan struct {
	Kind   copyKind
	Func   *cloneFunc
	Elem   *copyPlan
	Fields []fieldCopy
}

// planState tracks a named type through planning; recursive types reach
// themselves while being planned.
type planState int

const (
	unplanned planState = iota
	planning
	planned
)

// cloner plans the deep copies of one package.
type cloner struct {
	self *types.Package
	qual types.Qualifier
	// funcs and state are keyed by typeKey: instances of a generic type
	// may be distinct but identical *types.Named.
	funcs  map[string]*cloneFunc // nil: a plain copy is deep
	state  map[string]planState
	guards map[string]*types.Named
	notes  []string
	errs   ErrorList
	in     *pkgInput
	// at is the field being planned, where a broken type is reported.
	at token.Pos
}

func newCloner(in *pkgInput) *cloner {
	return &cloner{
		self:   in.Types,
		qual:   qualifier(nil),
		funcs:  map[string]*cloneFunc{},
		state:  map[string]planState{},
		guards: map[string]*types.Named{},
		in:     in,
	}
}

// entity returns the clone function of an annotated struct, which exists
// even when a plain copy is deep: the runtime needs one.
func (c *cloner) entity(t *types.Named) *cloneFunc {
	fn := c.named(t)
	if fn == nil {
		fn = &cloneFunc{Type: t}
		c.funcs[typeKey(t)] = fn
	}
	return fn
}

// named plans the clone function of a named struct type, or returns nil
// when a plain copy of it is deep.
func (c *cloner) named(t *types.Named) *cloneFunc {
	key := typeKey(t)
	if t.Obj().Pkg() == c.self {
		c.guards[key] = t
	}
	switch c.state[key] {
	case planning:
		// Only a pointer, slice or map leads back to t, and each of
		// those needs copying: t gets a function, under construction.
		c.funcs[key].Recursive = true
		return c.funcs[key]
	case planned:
		// An entity has a function even when a plain copy of it is deep;
		// a field of its type is still copied plainly.
		if fn := c.funcs[key]; fn != nil && (len(fn.Fields) > 0 || fn.Recursive) {
			return fn
		}
		return nil
	}
	c.state[key] = planning
	fn := &cloneFunc{Type: t}
	c.funcs[key] = fn
	fn.Fields = c.fields(t.Underlying().(*types.Struct), types.TypeString(t, c.qual), "", fn)
	c.state[key] = planned
	if len(fn.Fields) == 0 && !fn.Recursive {
		c.funcs[key] = nil
		return nil
	}
	return fn
}

// typeKey identifies a type by its full spelling, package paths included.
func typeKey(t types.Type) string { return types.TypeString(t, nil) }

// fields plans the fields of st that need more than a plain copy. Fields
// the generated package cannot access (unexported, of another package)
// stay as *v copied them; those holding references are noted.
func (c *cloner) fields(st *types.Struct, owner, path string, fn *cloneFunc) []fieldCopy {
	var fields []fieldCopy
	for i := range st.NumFields() {
		f := st.Field(i)
		fpath := f.Name()
		if path != "" {
			fpath = path + "." + f.Name()
		}
		if f.Name() == "_" || !f.Exported() && f.Pkg() != c.self {
			if hasRefs(f.Type()) {
				c.shared(owner, fpath, f.Type(), fn, "")
			}
			continue
		}
		c.at = f.Pos()
		if cp := c.plan(f.Type(), owner, fpath, fn); cp != nil {
			fields = append(fields, fieldCopy{Name: f.Name(), Copy: cp})
		}
	}
	return fields
}

// plan returns how to make a plain copy of a t deep, or nil when it
// already is. owner and path name the part, for notes.
func (c *cloner) plan(t types.Type, owner, path string, fn *cloneFunc) *copyPlan {
	orig := t
	t = types.Unalias(t)
	if n, ok := t.(*types.Named); ok {
		if n.Obj().Pkg() == c.self {
			c.guards[typeKey(n)] = n
		}
		if immutable(n) {
			return nil
		}
		if _, ok := n.Underlying().(*types.Struct); !ok {
			return c.plan(n.Underlying(), owner, path, fn) // kept named by the emitted code
		}
		if f := c.named(n); f != nil {
			return &copyPlan{Kind: copyFunc, Func: f}
		}
		return nil
	}
	switch u := t.(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.Invalid:
			pos := c.in.Fset.Position(c.at)
			if near := typeErrorsNear(c.in, pos, pos); len(near) > 0 {
				c.errs = append(c.errs, near...)
			} else {
				c.errs.Add(pos, annotations.RulePackageError, fmt.Sprintf("%s.%s: its type does not type-check", owner, path))
			}
		case types.UnsafePointer:
			c.shared(owner, path, orig, fn, "")
		}
		return nil
	case *types.Pointer:
		if isShared(u.Elem()) {
			return nil
		}
		if lockIn(u.Elem()) {
			c.shared(owner, path, orig, fn, "it points to a lock")
			return nil
		}
		return &copyPlan{Kind: copyPointer, Elem: c.plan(u.Elem(), owner, path, fn)}
	case *types.Slice:
		if lockIn(u.Elem()) {
			c.shared(owner, path, orig, fn, "its elements hold locks")
			return nil
		}
		return &copyPlan{Kind: copySlice, Elem: c.plan(u.Elem(), owner, path+"[i]", fn)}
	case *types.Map:
		if lockIn(u.Elem()) {
			c.shared(owner, path, orig, fn, "its values hold locks")
			return nil
		}
		if hasRefs(u.Key()) {
			c.shared(owner, path+" key", u.Key(), fn, "")
		}
		return &copyPlan{Kind: copyMap, Elem: c.plan(u.Elem(), owner, path+"[k]", fn)}
	case *types.Array:
		if e := c.plan(u.Elem(), owner, path+"[i]", fn); e != nil {
			return &copyPlan{Kind: copyArray, Elem: e}
		}
		return nil
	case *types.Struct:
		return c.structCopy(u, owner, path, fn)
	default: // interfaces, funcs, channels: no general way to copy them
		c.shared(owner, path, orig, fn, "")
		return nil
	}
}

// structCopy copies a struct that has no function of its own in place.
func (c *cloner) structCopy(st *types.Struct, owner, path string, fn *cloneFunc) *copyPlan {
	if fields := c.fields(st, owner, path, fn); len(fields) > 0 {
		return &copyPlan{Kind: copyStruct, Fields: fields}
	}
	return nil
}

// shared notes a part that stays shared between the copies.
func (c *cloner) shared(owner, path string, t types.Type, fn *cloneFunc, why string) {
	part := fmt.Sprintf("%s (%s)", path, types.TypeString(t, c.qual))
	note := fmt.Sprintf("%s.%s is copied shallowly", owner, part)
	if why != "" {
		note += ": " + why
	}
	c.notes = append(c.notes, note)
	if owner == types.TypeString(fn.Type, c.qual) {
		fn.Shared = append(fn.Shared, part)
	}
}

// finish names the clone functions and returns them with the guarded
// types and the notes, each sorted.
func (c *cloner) finish() ([]*cloneFunc, []*types.Named, []string) {
	var funcs []*cloneFunc
	for _, fn := range c.funcs {
		if fn != nil {
			funcs = append(funcs, fn)
		}
	}
	// Local types first, so they get the plain names.
	slices.SortFunc(funcs, func(a, b *cloneFunc) int {
		pa, pb := a.Type.Obj().Pkg(), b.Type.Obj().Pkg()
		return cmp.Or(
			cmp.Compare(boolInt(pa != c.self), boolInt(pb != c.self)),
			cmp.Compare(pa.Path(), pb.Path()),
			cmp.Compare(a.Type.Obj().Name(), b.Type.Obj().Name()),
			cmp.Compare(typeKey(a.Type), typeKey(b.Type)),
		)
	})
	taken := map[string]bool{}
	for _, fn := range funcs {
		base := "clone" + upperFirst(fn.Type.Obj().Name())
		if p := fn.Type.Obj().Pkg(); p != c.self {
			base = "clone" + upperFirst(p.Name()) + upperFirst(fn.Type.Obj().Name())
		}
		name := base
		for i := 2; taken[name] || c.in.Types.Scope().Lookup(name) != nil; i++ {
			name = fmt.Sprintf("%s%d", base, i)
		}
		taken[name] = true
		fn.Name = name
		if fn.Recursive {
			c.notes = append(c.notes, fmt.Sprintf("%s is recursive: %s expects values without pointer cycles", types.TypeString(fn.Type, c.qual), name))
		}
	}
	slices.SortFunc(funcs, func(a, b *cloneFunc) int { return cmp.Compare(a.Name, b.Name) })

	guards := slices.Collect(maps.Values(c.guards))
	slices.SortFunc(guards, func(a, b *types.Named) int {
		return cmp.Compare(types.TypeString(a, c.qual), types.TypeString(b, c.qual))
	})
	slices.Sort(c.notes)
	return funcs, guards, slices.Compact(c.notes)
}

// immutable reports named types whose values, though they hold references
// inside, are never changed through them: a plain copy is a deep one.
func immutable(n *types.Named) bool {
	if n.Obj().Pkg() == nil {
		return false // error
	}
	switch n.Obj().Pkg().Path() + "." + n.Obj().Name() {
	case "time.Time", "time.Location",
		"net/netip.Addr", "net/netip.Prefix", "net/netip.AddrPort":
		return true
	}
	return false
}

// isShared reports pointees that are shared by design, such as
// *time.Location: copying one would only waste memory.
func isShared(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Location"
}

// hasRefs reports whether a plain copy of a t shares memory with the
// original: it holds, by value, a pointer, slice, map, channel, function
// or interface.
func hasRefs(t types.Type) bool {
	t = types.Unalias(t)
	if n, ok := t.(*types.Named); ok && immutable(n) {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Kind() == types.UnsafePointer
	case *types.Array:
		return hasRefs(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if hasRefs(u.Field(i).Type()) {
				return true
			}
		}
		return false
	default:
		return true
	}
}

// lockPath names the first field of t that holds a lock by value, the way
// go vet's copylocks check sees one, or returns "".
func lockPath(t *types.Named) string {
	st := t.Underlying().(*types.Struct)
	for i := range st.NumFields() {
		if f := st.Field(i); lockIn(f.Type()) {
			return fmt.Sprintf("field %s, %s", f.Name(), types.TypeString(f.Type(), qualifier(t.Obj().Pkg())))
		}
	}
	return ""
}

// lockIn reports whether a value of t holds a lock: a type whose pointer
// has Lock and Unlock methods (sync.Mutex, the noCopy marker of
// sync/atomic types), directly or in a struct field or array element.
func lockIn(t types.Type) bool {
	t = types.Unalias(t)
	if _, ok := t.(*types.Named); ok {
		ms := types.NewMethodSet(types.NewPointer(t))
		if isLockMethod(ms.Lookup(nil, "Lock")) && isLockMethod(ms.Lookup(nil, "Unlock")) {
			return true
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			if lockIn(u.Field(i).Type()) {
				return true
			}
		}
	case *types.Array:
		return lockIn(u.Elem())
	}
	return false
}

// isLockMethod reports a method func().
func isLockMethod(sel *types.Selection) bool {
	if sel == nil {
		return false
	}
	sig, ok := sel.Type().(*types.Signature)
	return ok && sig.Params().Len() == 0 && sig.Results().Len() == 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
