package track

import "github.com/redis/go-redis/v9"

// The options of the connections the runtime opens itself (invalidation
// sessions, the breaker's probes), made from the caller's client: one
// copy for a client of one server, one for a node of a cluster client.
// go-redis has no type the two share, so the two lists of fields live
// here side by side, and TestNodeOptionsCopyTheSameFields fails when a
// field one copies is missing from the other.

// ConnOptions takes from a live client's options what opening another
// connection to the same server needs: where and how to dial (for a
// Sentinel failover client, the dialer that finds the current master),
// credentials, database and timeouts. The live options are not copied
// whole: go-redis updates some of their fields under its own lock.
func ConnOptions(o *redis.Options) *redis.Options {
	return &redis.Options{
		Network:                      o.Network,
		Addr:                         o.Addr,
		Dialer:                       o.Dialer,
		Username:                     o.Username,
		Password:                     o.Password,
		CredentialsProvider:          o.CredentialsProvider,
		CredentialsProviderContext:   o.CredentialsProviderContext,
		StreamingCredentialsProvider: o.StreamingCredentialsProvider,
		DB:                           o.DB,
		DialTimeout:                  o.DialTimeout,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		TLSConfig:                    o.TLSConfig,
		ClientName:                   o.ClientName,
	}
}

// ClusterNodeOptions are the options of a connection to one node of a
// cluster client's cluster.
func ClusterNodeOptions(o *redis.ClusterOptions, addr string) *redis.Options {
	return &redis.Options{
		Addr:                         addr,
		Dialer:                       o.Dialer,
		Username:                     o.Username,
		Password:                     o.Password,
		CredentialsProvider:          o.CredentialsProvider,
		CredentialsProviderContext:   o.CredentialsProviderContext,
		StreamingCredentialsProvider: o.StreamingCredentialsProvider,
		DialTimeout:                  o.DialTimeout,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		TLSConfig:                    o.TLSConfig,
		ClientName:                   o.ClientName,
	}
}
