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
	// KeyChannels is Pub/Sub on a channel per key (KeyChannel), to which
	// a keyed session subscribes for the keys of the copies kept.
	KeyChannels = "pubsub-keys"
	Off         = "off"
)

// Channel is the channel Pub/Sub invalidation uses for an entity whose
// keys start with prefix.
func Channel(prefix string) string { return "hotkeygen:invalidate:" + prefix }

// keyChannelPrefix starts every key's channel: a namespace of its own, so
// that no entity's channel is a key's.
const keyChannelPrefix = "hotkeygen:key:"

// KeyChannel is the channel on which a write of key is announced to the
// instances that hold a copy of it (KeyChannels). Every announcement goes
// on both the entity's channel and the key's, so that builds listening on
// either hear it during a rolling deploy.
func KeyChannel(key string) string { return keyChannelPrefix + key }

// keyedMode reports whether the mode's sessions listen only for the keys of
// the copies kept (keyedSession): tracking, and Pub/Sub on key channels.
func keyedMode(mode string) bool { return mode == Tracking || mode == KeyChannels }

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

// Announce publishes the writes of keys, whose entity's keys start with
// prefix, each on the entity's channel and on the key's. On a cluster a
// key's message is sent to the key's master: Redis delivers a PUBLISH to
// the subscribers of the node that takes it before it reads another
// command, and to the other nodes' later, over the cluster bus, so only
// there is it ordered before the answers to the PINGs that vouch for the
// key's copies (the entity's goes there too: a cluster delivers a
// PUBLISH to every node's subscribers). A plain client sends them all in
// one round trip, a cluster client one per key; any other (a Ring routes
// each PUBLISH by its channel) one command at a time.
func Announce(ctx context.Context, rdb redis.UniversalClient, prefix string, keys []string) error {
	switch r := rdb.(type) {
	case *redis.Client:
		_, err := r.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, key := range keys {
				p.Publish(ctx, Channel(prefix), key)
				p.Publish(ctx, KeyChannel(key), "")
			}
			return nil
		})
		return err
	case *redis.ClusterClient:
		for _, key := range keys {
			master, err := r.MasterForKey(ctx, key)
			if err != nil {
				return err
			}
			if _, err := master.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Publish(ctx, Channel(prefix), key)
				p.Publish(ctx, KeyChannel(key), "")
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, key := range keys {
		if err := rdb.Publish(ctx, KeyChannel(key), "").Err(); err != nil {
			return err
		}
		if err := rdb.Publish(ctx, Channel(prefix), key).Err(); err != nil {
			return err
		}
	}
	return nil
}
