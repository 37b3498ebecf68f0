// Package keyver places each version of an entity's values on keys of its
// own, and finds the keys of the versions beside one: the generator
// writes the first, and the runtime's writes delete the second, so that a
// write by a build of one version reaches the readers of the build of the
// next or the last during a rolling deploy (docs/changing-structs.md).
package keyver

import "strconv"

// Prefix returns the first literal of a key template for version:
// unchanged for version 1, and with "v2" and the literal's own last
// character after it for version 2 ("user:" becomes "user:v2:"), so every
// key, and the prefix invalidations are tracked for, are the version's
// own.
func Prefix(lit string, version int) string {
	if version <= 1 || lit == "" {
		return lit
	}
	return lit + "v" + strconv.Itoa(version) + lit[len(lit)-1:]
}

// Neighbours returns the keys that key, of an entity of version whose
// keys start with prefix (Prefix's, for version), has under the versions
// one below and one above: the keys a build of either may hold the same
// row under during a rolling deploy. None for a key outside prefix, or
// without one.
func Neighbours(prefix string, version int, key string) []string {
	lit, ok := unversioned(prefix, version)
	if !ok || len(key) < len(prefix) || key[:len(prefix)] != prefix {
		return nil
	}
	rest := key[len(prefix):]
	out := NeighbourPrefixes(Prefix(lit, version), version)
	for i := range out {
		out[i] += rest
	}
	return out
}

// NeighbourPrefixes returns the prefixes of the versions one below and
// one above version, whose keys start with prefix, in the order of
// Neighbours' keys; none without a prefix.
func NeighbourPrefixes(prefix string, version int) []string {
	lit, ok := unversioned(prefix, version)
	if !ok {
		return nil
	}
	var out []string
	if version > 1 {
		out = append(out, Prefix(lit, version-1))
	}
	return append(out, Prefix(lit, version+1))
}

// unversioned returns the literal whose Prefix for version is prefix.
func unversioned(prefix string, version int) (string, bool) {
	if prefix == "" {
		return "", false
	}
	if version <= 1 {
		return prefix, true
	}
	mark := "v" + strconv.Itoa(version) + prefix[len(prefix)-1:]
	lit := prefix[:max(len(prefix)-len(mark), 0)]
	if lit == "" || Prefix(lit, version) != prefix {
		return "", false
	}
	return lit, true
}
