//go:build slotd_nofastschema

package contract

const fastSchema = false
