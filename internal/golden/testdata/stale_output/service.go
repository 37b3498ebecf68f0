package stale

import "github.com/redis/go-redis/v9"

// NewService uses the generated repository, which the generator hides
// while it loads the package.
func NewService(rdb redis.UniversalClient) (*UserRepo, error) {
	return NewUserRepo(rdb)
}
