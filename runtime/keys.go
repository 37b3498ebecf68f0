package runtime

import "strings"

// AppendKeyString appends s to a Redis key being built in b, escaped so
// that no value of a string key field can produce the key of another
// entity. Generated key builders call it for every string field, with
// special holding '%' and every punctuation byte of the key template's
// literal text ("%:" for "acct:{Org}:{User}").
//
// Each byte of s found in special is written as '%' and two upper-case
// hex digits, as in URL percent-encoding: Org "a:b" gives "acct:a%3Ab:c",
// which no other Org and User can give. The escaping is reversible, and a
// string holding none of the special bytes, the common case, is written
// unchanged.
func AppendKeyString(b []byte, s, special string) []byte {
	if !strings.ContainsAny(s, special) {
		return append(b, s...)
	}
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		if c := s[i]; strings.IndexByte(special, c) >= 0 {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return b
}
