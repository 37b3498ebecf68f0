// Package tenants keys each entity by one field of a named type, its own
// package's or another's: the cache is keyed by that type itself.
package tenants

import "github.com/hotkeygen/hotkeygen/internal/golden/testdata/single_key_types/geo"

// TenantID identifies a tenant.
type TenantID int64

// Tenant is a customer of the service.
//
//hotkey:cache key=tenant:{ID}
type Tenant struct {
	ID   TenantID
	Name string
}

// Zone is the settings of one region.
//
//hotkey:cache key=zone:{Region}
type Zone struct {
	Region geo.Region
	Hosts  []string
}
