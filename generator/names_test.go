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
		fields: []string{"Ctx", "R", "V", "B", "Load"},
		want:   []string{"ctx_", "r_", "v_", "b_", "load_"},
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

func TestPlural(t *testing.T) {
	tests := []struct{ in, want string }{
		{"User", "Users"},           // most names get "s"
		{"Person", "Persons"},       // no dictionary of irregular plurals
		{"Order", "Orders"},         //
		{"Address", "Addresses"},    // "ss" gets "es"
		{"Box", "Boxes"},            // so do "x",
		{"Quiz", "Quizes"},          // "z", without doubling it,
		{"Match", "Matches"},        // "ch"
		{"Wish", "Wishes"},          // and "sh"
		{"Category", "Categories"},  // a consonant and "y" become "ies"
		{"Day", "Days"},             // a vowel and "y" get "s"
		{"Key", "Keys"},             //
		{"News", "News"},            // another final "s" is taken as plural already
		{"Series", "Series"},        //
		{"Status", "Status"},        // which is how Status reads, too
		{"ID", "IDs"},               // a final capital is an initialism: "s"
		{"UserID", "UserIDs"},       //
		{"SKU", "SKUs"},             //
		{"Item2", "Item2s"},         // so is a final digit
		{"id", "ids"},               // parameters are lower case
		{"userID", "userIDs"},       //
		{"orderLine", "orderLines"}, // only the last word counts
		{"y", "ys"},                 // one letter: no consonant before the "y"
	}
	for _, tt := range tests {
		if got := plural(tt.in); got != tt.want {
			t.Errorf("plural(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestManyNameNeverReadsAsTheName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"User", "Users"},
		{"Category", "Categories"},
		{"News", "NewsList"},
		{"Series", "SeriesList"},
		{"series", "seriesList"},
	}
	for _, tt := range tests {
		if got := manyName(tt.in); got != tt.want {
			t.Errorf("manyName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestManyParamName(t *testing.T) {
	tests := []struct {
		name    string
		fields  []string
		imports []string
		want    string
	}{
		{"the plural of the key field's parameter", []string{"ID"}, nil, "ids"},
		{"only the first word is lowered", []string{"UserID"}, nil, "userIDs"},
		{"a word that is its own plural gets List", []string{"Series"}, nil, "seriesList"},
		{"several fields make a slice of key structs", []string{"Tenant", "Num"}, nil, "keys"},
		{"an import name is avoided", []string{"Slice"}, []string{"slices"}, "slices_"},
		{"and so is a predeclared one", []string{"Cap"}, nil, "caps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := manyParamName(tt.fields, tt.imports); got != tt.want {
				t.Errorf("manyParamName(%q, %q) = %q, want %q", tt.fields, tt.imports, got, tt.want)
			}
		})
	}
}

func TestEntityNames(t *testing.T) {
	user, news, token := &entity{Name: "User"}, &entity{Name: "News"}, &entity{Name: "Token"}
	tests := []struct{ got, want string }{
		{user.Repo(), "UserRepo"},
		{user.Ctor(), "NewUserRepo"},
		{user.MustCtor(), "MustNewUserRepo"},
		{user.KeyName(), "UserKey"},
		{user.Get(), "GetUser"},
		{user.GetMany(), "GetUsers"}, // the batch names are the plural's
		{user.Set(), "SetUser"},
		{user.Del(), "DelUser"},
		{user.Loader(), "WithUserLoader"},
		{user.BatchLoader(), "WithUsersLoader"},
		{user.MarkChanged(), "MarkUserChanged"},
		{user.SyncHook(), "WithUserSyncHook"},
		{user.WarmBloom(), "WarmUserBloom"},
		{news.Get(), "GetNews"},
		{news.GetMany(), "GetNewsList"}, // never the single name again
		{news.BatchLoader(), "WithNewsListLoader"},
		{token.HGetAll(), "HGetAllTokens"}, // a collection's names are its Redis commands'
		{token.HGetAllMany(), "HGetAllTokensMany"},
		{token.HGet(), "HGetToken"},
		{token.HSet(), "HSetToken"},
		{token.HSetMany(), "HSetTokens"},
		{token.HDel(), "HDelToken"},
		{token.DelAll(), "DelTokens"},
		{token.FieldName(), "TokenField"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func TestJoinAnd(t *testing.T) {
	tests := []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"}, // no comma before "and"
	}
	for _, tt := range tests {
		if got := joinAnd(tt.words); got != tt.want {
			t.Errorf("joinAnd(%q) = %q, want %q", tt.words, got, tt.want)
		}
	}
}
