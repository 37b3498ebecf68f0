package generator

import "testing"

func TestKeySpecial(t *testing.T) {
	tests := []struct {
		name string
		lits []string // the template's literal parts
		want string
	}{
		{"a colon separates the parts", []string{"acct:", ":"}, "%:"},
		{"a slash", []string{"user/"}, "%/"},
		{"every punctuation byte, once, sorted", []string{"a-b.", "|", "-", " "}, " %-.|"},
		{"letters and digits are not escaped", []string{"v2x"}, "%"},
		{"a percent sign is there anyway", []string{"%"}, "%"},
		{"nor are bytes beyond ASCII", []string{"ключ:"}, "%:"},
		{"no literal text", nil, "%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &entity{}
			for _, l := range tt.lits {
				e.Key = append(e.Key, keyPart{Lit: l}, keyPart{Param: &param{Kind: keyString}})
			}
			if got := keySpecial(e); got != tt.want {
				t.Errorf("keySpecial(%q) = %q, want %q", tt.lits, got, tt.want)
			}
		})
	}
}
