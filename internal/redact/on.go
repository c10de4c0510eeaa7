//go:build !slotd_test_redact_off

package redact

// off turns the detector off; see off.go.
const off = false
