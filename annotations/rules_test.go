package annotations

import (
	"errors"
	"go/ast"
	"go/types"
	"maps"
	"slices"
	"strings"
	"testing"
)

// reporters are the packages that create findings, as go list names them
// from the repository's root.
var reporters = []string{"./annotations", "./generator", "./cmd/hotkeygen"}

// TestEveryFindingNamesARule holds every place of the reporters that
// creates a finding to naming the rule it breaks, so that no finding
// reaches CI without one: each Error literal sets Rule, and each argument
// of type Rule (ErrorList.Add, Part.Errorf, a reporter's own helper) is a
// rule constant, the Rule of another Error it copies, or a parameter that
// passes its caller's on (whose call is held to the same). It also holds
// every rule to being reported somewhere: one that nothing reports is
// documented for nothing.
func TestEveryFindingNamesARule(t *testing.T) {
	unused := map[string]bool{}
	for _, r := range declaredRules(t) {
		unused[string(r)] = true
	}
	for _, pkg := range loadTyped(t, reporters...) {
		for _, f := range pkg.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if isRuleOwner(pkg.TypesInfo.TypeOf(n)) {
						checkErrorLiteral(t, pkg.Fset.Position(n.Pos()).String(), pkg.TypesInfo, n)
					}
				case *ast.CallExpr:
					checkRuleArguments(t, pkg.Fset.Position(n.Pos()).String(), pkg.TypesInfo, n)
				case *ast.Ident:
					if c, ok := pkg.TypesInfo.Uses[n].(*types.Const); ok && isRule(c.Type()) {
						delete(unused, strings.Trim(c.Val().ExactString(), `"`))
					}
				}
				return true
			})
		}
	}
	for _, r := range slices.Sorted(maps.Keys(unused)) {
		t.Errorf("rule %s is declared (rules.go) but nothing reports it: report it where it is broken, or remove it and its section of docs/findings.md", r)
	}
}

// checkErrorLiteral fails the test unless the Error literal lit, at at,
// names its rule.
func checkErrorLiteral(t *testing.T, at string, info *types.Info, lit *ast.CompositeLit) {
	t.Helper()
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			t.Errorf("%s: an Error literal without field names; write Pos:, Rule: and Msg:, so that a missing rule shows", at)
			return
		}
		if key, _ := kv.Key.(*ast.Ident); key != nil && key.Name == "Rule" {
			if why := badRule(info, kv.Value); why != "" {
				t.Errorf("%s: an Error's Rule %s", at, why)
			}
			return
		}
	}
	t.Errorf("%s: an Error without a Rule; set Rule: to the rule it breaks (rules.go)", at)
}

// checkRuleArguments fails the test for each argument of call, at at,
// passed as a Rule that does not name one.
func checkRuleArguments(t *testing.T, at string, info *types.Info, call *ast.CallExpr) {
	t.Helper()
	sig, ok := info.TypeOf(call.Fun).(*types.Signature)
	if !ok {
		return // a conversion, or a builtin
	}
	for i, arg := range call.Args {
		if i >= sig.Params().Len() || !isRule(sig.Params().At(i).Type()) {
			continue
		}
		if why := badRule(info, arg); why != "" {
			t.Errorf("%s: the rule passed %s", at, why)
		}
	}
}

// badRule says why x does not name a rule, or returns "" when it does.
func badRule(info *types.Info, x ast.Expr) string {
	if tv, ok := info.Types[x]; ok && tv.Value != nil {
		if s := tv.Value.ExactString(); s == `""` {
			return "is empty; use a constant of rules.go"
		}
		return ""
	}
	switch x := ast.Unparen(x).(type) {
	case *ast.SelectorExpr:
		if v, ok := info.Uses[x.Sel].(*types.Var); ok && v.IsField() && v.Name() == "Rule" {
			return "" // copied from another finding
		}
	case *ast.Ident:
		if v, ok := info.Uses[x].(*types.Var); ok && v.Kind() == types.ParamVar {
			return "" // its caller's, checked at the call
		}
	}
	return "is computed; pass a constant of rules.go, or the Rule of the Error it copies"
}

// isRule reports whether t is annotations.Rule.
func isRule(t types.Type) bool { return isNamed(t, "Rule") }

// isRuleOwner reports whether t is annotations.Error, or a pointer to one.
func isRuleOwner(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	return isNamed(t, "Error")
}

// Each mistake in a directive breaks the rule its finding names, one row
// per way of breaking it; the rules of the generator, which need the
// struct, are the golden cases'.
func TestEachMistakeInADirectiveBreaksItsRule(t *testing.T) {
	for _, tt := range []struct {
		name  string
		doc   []string
		rules []Rule // in the order of the findings
	}{
		{"a space after //", []string{"// hotkey:cache key=user:{ID}"}, []Rule{RuleDirectiveMalformed}},
		{"a directive other than //hotkey:cache", []string{"//hotkey:cahce key=user:{ID}"}, []Rule{RuleDirectiveMalformed}},
		{"an option without a value", []string{"//hotkey:cache key=user:{ID} ttl"}, []Rule{RuleUnparsableValue}},
		{"an argument that is not name=value", []string{"//hotkey:cache key=user:{ID} fast"}, []Rule{RuleDirectiveMalformed}},
		{"a value without a name", []string{"//hotkey:cache key=user:{ID} =1m"}, []Rule{RuleDirectiveMalformed}},
		{"an unknown option", []string{"//hotkey:cache key=user:{ID} hot_qsp=1"}, []Rule{RuleUnknownOption}},
		{"an option set twice", []string{"//hotkey:cache key=user:{ID} ttl=1m", "//hotkey:cache ttl=2m"}, []Rule{RuleDuplicateOption}},
		{"an empty value", []string{"//hotkey:cache key=user:{ID} ttl="}, []Rule{RuleUnparsableValue}},
		{"a value of another form", []string{"//hotkey:cache key=user:{ID} ttl=30x"}, []Rule{RuleUnparsableValue}},
		{"a stray quote", []string{`//hotkey:cache key=user:{ID} name=a"b`}, []Rule{RuleUnparsableValue}},
		{"a quote that does not close", []string{`//hotkey:cache key="user:{ID}`}, []Rule{RuleUnparsableValue}},
		{"no key", []string{"//hotkey:cache ttl=1m"}, []Rule{RuleOptionMissing}},
		{"a collection without field=", []string{"//hotkey:cache key=user:{ID} layout=hash"}, []Rule{RuleOptionMissing}},
		{"a value the runtime refuses", []string{"//hotkey:cache key=user:{ID} null_ttl=-1m"}, []Rule{RuleConfigInvalid}},
		{"options that contradict each other", []string{"//hotkey:cache key=user:{ID} hot_qps=10 warm_qps=20"}, []Rule{RuleConfigInvalid}},
		{"field= without layout=hash", []string{"//hotkey:cache key=user:{ID} field={ID}"}, []Rule{RuleConfigInvalid}},
		{"changes=on in a collection", []string{"//hotkey:cache key=user:{ID} layout=hash field={ID} changes=on"}, []Rule{RuleConfigInvalid}},
		{"an unbalanced brace", []string{"//hotkey:cache key=user:{ID"}, []Rule{RuleKeyTemplateInvalid}},
		{"a brace of no field", []string{"//hotkey:cache key=user:{1}"}, []Rule{RuleKeyTemplateInvalid}},
		{"a template without a prefix", []string{"//hotkey:cache key={ID}"}, []Rule{RuleKeyTemplateInvalid}},
		{"a template without a field", []string{"//hotkey:cache key=user"}, []Rule{RuleKeyTemplateInvalid}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDoc(t, tt.doc...)
			var list ErrorList
			errors.As(err, &list)
			var got []Rule
			for _, e := range list {
				got = append(got, e.Rule)
			}
			if !slices.Equal(got, tt.rules) {
				t.Errorf("rules %v of\n%v\nwant %v", got, err, tt.rules)
			}
		})
	}
}

// docs/findings.md, where a finding's rule sends a reader, explains every
// rule in a row of its table, in the order of rules.go, and no other.
func TestTheDocExplainsEveryRule(t *testing.T) {
	declared, documented := declaredRules(t), documentedRules(t)
	if !slices.Equal(declared, documented) {
		t.Errorf("docs/findings.md's table of rules lists\n%v\nwant, in the order of rules.go,\n%v", documented, declared)
	}
}
