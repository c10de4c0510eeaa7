package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// What becomes of a session started on an older version of a tool
// (x-slotd.upgrade).
const (
	// Pin: the session finishes on the version it started with, on every
	// replica.
	Pin = "pin"
	// Migrate: the next turn moves the session to the newest version, slot
	// by slot, and says so.
	Migrate = "migrate"
)

func parseUpgrade(s string) (string, error) {
	switch s {
	case "", Pin:
		return Pin, nil
	case Migrate:
		return Migrate, nil
	}
	return "", fmt.Errorf("x-slotd.upgrade is %q; it is %q (the default) or %q", s, Pin, Migrate)
}

// Canonical is a contract document in canonical JSON — object members
// sorted by name, no insignificant space, numbers as written, no HTML
// escaping — and its version: the first 8 bytes of the SHA-256 of that
// form, in hex. Reformatting a file or reordering its members keeps the
// version; any change of content makes a new one.
func Canonical(src []byte) (canonical []byte, version string, err error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, "", err
	}
	canonical = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	sum := sha256.Sum256(canonical)
	return canonical, hex.EncodeToString(sum[:8]), nil
}
