package annotations

import (
	"go/token"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// args reads the name=value arguments of a directive line text, written at
// pos, from byte offset i on. Arguments are separated by spaces or tabs; a
// double-quoted section may hold them.
func (r *reader) args(pos token.Position, text string, i int) {
	for {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i == len(text) {
			return
		}
		start := i
		for quoted := false; i < len(text) && (quoted || text[i] != ' ' && text[i] != '\t'); i++ {
			switch {
			case text[i] == '"':
				quoted = !quoted
			case text[i] == '\\' && quoted:
				i++ // the escaped byte cannot close the quote
			}
		}
		i = min(i, len(text)) // a trailing backslash may step past the end
		r.arg(shift(pos, start), text[start:i])
	}
}

// arg reads one argument written at pos.
func (r *reader) arg(pos token.Position, arg string) {
	name, raw, hasValue := strings.Cut(arg, "=")
	opt, known := options[name]
	switch {
	case !hasValue && known:
		r.errs.add(pos, RuleUnparsableValue, "%s: no value; write %s=VALUE with a form like %s", name, name, opt.form)
		return
	case !hasValue:
		r.errs.add(pos, RuleDirectiveMalformed, "argument %q is not name=value; write options like ttl=30m", arg)
		return
	case name == "":
		r.errs.add(pos, RuleDirectiveMalformed, "argument %q has no option name; write options like ttl=30m", arg)
		return
	case !known:
		if guess := Closest(name, OptionNames()); guess != "" {
			r.errs.add(pos, RuleUnknownOption, "unknown option %q; did you mean %q?", name, guess)
		} else {
			r.errs.add(pos, RuleUnknownOption, "unknown option %q; the options are %s", name, strings.Join(OptionNames(), ", "))
		}
		return
	}
	if first, dup := r.set[name]; dup {
		r.errs.add(pos, RuleDuplicateOption, "duplicate option %q, first set at %d:%d; remove one", name, first.Line, first.Column)
		return
	}
	r.set[name] = pos

	v, at, ok := r.value(pos, name, raw)
	if !ok {
		return
	}
	if v == "" {
		r.errs.add(pos, RuleUnparsableValue, "%s: empty value; use a form like %s", name, opt.form)
		return
	}
	if err := opt.set(&r.spec, v, at); err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{Rule: RuleUnparsableValue, Msg: err.Error()}
		}
		if !e.Pos.IsValid() {
			e.Pos = pos
		}
		r.errs.add(e.Pos, e.Rule, "%s: %s", name, e.Msg)
		return
	}
	r.spec.Args = append(r.spec.Args, Arg{Name: name, Value: v, Pos: pos})
}

// value unquotes the raw value of the argument name=raw written at argPos,
// and maps each byte of the result back to its position in the source.
func (r *reader) value(argPos token.Position, name, raw string) (string, func(int) token.Position, bool) {
	pos := shift(argPos, len(name)+len("="))
	if !strings.HasPrefix(raw, `"`) {
		if strings.Contains(raw, `"`) {
			r.errs.add(argPos, RuleUnparsableValue, `%s: stray '"' in value; quote the whole value, as in key="user {Org}:{ID}"`, name)
			return "", nil, false
		}
		return raw, func(i int) token.Position { return shift(pos, i) }, true
	}
	v, offsets, err := unquote(raw)
	if err != nil {
		r.errs.add(argPos, RuleUnparsableValue, `%s: %s is not a valid Go quoted string; end it with '"' and escape '"' and '\' inside with '\'`, name, raw)
		return "", nil, false
	}
	return v, func(i int) token.Position { return shift(pos, offsets[i]) }, true
}

// unquote decodes the Go double-quoted string q like strconv.Unquote and
// also returns, for each byte of the result, the offset in q of the
// character that produced it, so errors inside a quoted key point at the
// source.
func unquote(q string) (string, []int, error) {
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", nil, err
	}
	offsets := make([]int, 0, len(v))
	for rest := q[1 : len(q)-1]; rest != ""; {
		at := len(q) - 1 - len(rest)
		r, multibyte, tail, _ := strconv.UnquoteChar(rest, '"')
		n := 1
		if multibyte {
			n = utf8.RuneLen(r)
		}
		for range n {
			offsets = append(offsets, at)
		}
		rest = tail
	}
	return v, offsets, nil
}

// OptionNames lists the options a //hotkey:cache directive accepts, sorted.
func OptionNames() []string {
	return slices.Sorted(maps.Keys(options))
}

// shift moves pos n bytes along its line.
func shift(pos token.Position, n int) token.Position {
	pos.Offset += n
	pos.Column += n
	return pos
}
