// Package catalog has entities whose batch reads are named by each rule
// of the generator's plural: GetAddresses, GetCategories, GetDays,
// GetBoxes, GetMatches, and GetNewsList for a name that is its own plural.
package catalog

// Address gets "es" after "ss".
//
//hotkey:cache key=plural:address:{ID}
type Address struct {
	ID     int64
	Street string
}

// Category turns its "y" into "ies".
//
//hotkey:cache key=plural:category:{Slug}
type Category struct {
	Slug  string
	Title string
}

// Day keeps its "y": a vowel comes before it.
//
//hotkey:cache key=plural:day:{Date}
type Day struct {
	Date string
	Note string
}

// Box gets "es" after "x", and its key field's parameter, code, becomes
// codes.
//
//hotkey:cache key=plural:box:{Code}
type Box struct {
	Code   string
	Weight int
}

// Match gets "es" after "ch"; its key has two fields, so its batch read
// takes keys.
//
//hotkey:cache key=plural:match:{Day}:{Num}
type Match struct {
	Day  string
	Num  int
	Home string
}

// News is its own plural, so its batch read is GetNewsList.
//
//hotkey:cache key=plural:news:{ID}
type News struct {
	ID       uint64
	Headline string
}

// seriesRow is named by name=, which the batch names follow too, and is
// keyed by a field whose plural is itself: GetSeriesList(ctx, seriesList).
//
//hotkey:cache key=plural:series:{Series} name=Series
type seriesRow struct {
	Series   string
	Episodes int
}
