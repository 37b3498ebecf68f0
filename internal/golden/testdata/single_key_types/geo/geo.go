// Package geo holds location types shared by several services.
package geo

// Region names where data lives.
type Region string
