//go:build !slotd_nofastschema

package contract

// fastSchema is false in a build with the tag slotd_nofastschema: then
// every check goes to the library, for make bench-fastpaths to measure
// what the fast path saves.
const fastSchema = true
