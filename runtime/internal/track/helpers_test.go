package track

import (
	"testing"
	"time"

	"github.com/hotkeygen/hotkeygen/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// epoch is where the tests' manual clocks start.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
