//go:build slotd_test_redact_off

package redact

import "os"

// off turns the detector off in a build with the slotd_test_redact_off tag:
// nothing holds a card number, nothing is masked. Only the test that proves
// its leak scan finds what a slotd without the detector lets through builds
// slotd so (integration/cards_test.go); no release build sets the tag, and
// no flag or setting can turn it on at run time.
const off = true

func init() {
	os.Stderr.WriteString("slotd: built with slotd_test_redact_off: card numbers are neither refused nor masked; never run this build with real data\n")
}
