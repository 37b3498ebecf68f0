package track

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Invalidation modes: how a write on any instance, or by any other
// writer, reaches the local copies of every instance (the runtime's
// Invalidate… constants).
const (
	Tracking = "tracking"
	PubSub   = "pubsub"
	Off      = "off"
)

// Channel is the channel Pub/Sub invalidation uses for an entity whose
// keys start with prefix.
func Channel(prefix string) string { return "hotkeygen:invalidate:" + prefix }

// session is one live subscription. next blocks for the next batch of
// invalidated keys; it returns a nil batch and no error when it timed out
// and the connection is still healthy, and flush when the node was
// emptied (FLUSHALL, FLUSHDB).
type session interface {
	next(ctx context.Context) (keys []string, flush bool, err error)
	// arm hands the session, once its node counts it live, the function
	// that ends its coverage (for a session that can tell it is lost
	// before next returns) and the voucher its answered PINGs feed.
	arm(end func(), v voucher)
	close()
}

// noTracking reports a server that does not know what tracking needs
// (CLIENT ID, CLIENT TRACKING), as opposed to a connection failure or a
// refusal that may pass (-BUSY, -LOADING, an ACL being changed).
type noTracking struct{ err error }

func (e noTracking) Error() string { return e.err.Error() }
func (e noTracking) Unwrap() error { return e.err }

// refused wraps err as noTracking when Redis answered that it does not
// know the command or subcommand.
func refused(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := strings.ToLower(rerr.Error())
		if strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown subcommand") {
			return noTracking{err}
		}
	}
	return err
}
