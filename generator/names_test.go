package generator

import (
	"slices"
	"testing"
)

func TestLowerIdent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ID", "id"},                 // an initialism is lowered whole
		{"UserID", "userID"},         // only the first word is lowered
		{"HTTPCode", "httpCode"},     // the last capital starts the next word
		{"User", "user"},             // a plain word
		{"OrderLine", "orderLine"},   // as entity names read in stats
		{"already", "already"},       // nothing to lower
		{"X", "x"},                   // one letter
		{"Ünicode", "ünicode"},       // letters beyond ASCII
		{"URLs", "urLs"},             // a plural initialism is not guessed at
		{"TenantNum2", "tenantNum2"}, // digits stay
	}
	for _, tt := range tests {
		if got := lowerIdent(tt.in); got != tt.want {
			t.Errorf("lowerIdent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParamNames(t *testing.T) {
	tests := []struct {
		name    string
		fields  []string
		imports []string
		want    []string
	}{{
		name:   "fields become parameters with a lower first word",
		fields: []string{"Tenant", "Num", "UserID"},
		want:   []string{"tenant", "num", "userID"},
	}, {
		name:   "keywords and predeclared names get an underscore",
		fields: []string{"Type", "Func", "Len", "String", "Nil"},
		want:   []string{"type_", "func_", "len_", "string_", "nil_"},
	}, {
		name:   "the names generated code uses itself are avoided",
		fields: []string{"Ctx", "R", "V", "B"},
		want:   []string{"ctx_", "r_", "v_", "b_"},
	}, {
		name:    "so are the file's imports, which a parameter would shadow",
		fields:  []string{"Strconv", "Time", "Runtime2"},
		imports: []string{"strconv", "time", "runtime2"},
		want:    []string{"strconv_", "time_", "runtime2_"},
	}, {
		name:   "fields that lower to the same name stay apart",
		fields: []string{"ID", "Id"},
		want:   []string{"id", "id_"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := paramNames(tt.fields, tt.imports); !slices.Equal(got, tt.want) {
				t.Errorf("paramNames(%q) = %q, want %q", tt.fields, got, tt.want)
			}
		})
	}
}
