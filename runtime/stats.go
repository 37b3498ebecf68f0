package runtime

import "github.com/hotkeygen/hotkeygen/runtime/internal/engine"

// What a Cache reports of itself: Stats, a snapshot of its counters and
// hot keys (each a HotKey; ReadOutcomes, the reads by how each was
// answered; ChangeStats and BloomStats for the change buffer and the
// Bloom filter), and History, a Sample a second over the
// last HistoryLen seconds. runtime/internal/engine documents each field.
type (
	Stats        = engine.Stats
	HotKey       = engine.HotKey
	ReadOutcomes = engine.ReadOutcomes
	ChangeStats  = engine.ChangeStats
	BloomStats   = engine.BloomStats
	Sample       = engine.Sample
)

// HistoryLen is how many samples History keeps: ten minutes at one a
// second.
const HistoryLen = engine.HistoryLen
