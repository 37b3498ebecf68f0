package store

// Shop sells things at an address.
//
//hotkey:cache key=shop:{Code} hot_qps=100 warm_qps=20
type Shop struct {
	Code    uint64
	Address Address
}
