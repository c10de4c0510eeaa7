package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/google/uuid"
)

// idempotencyKey is the same for the same session and arguments, so a
// backend can de-duplicate a retried call.
//
// The key names its session ("sd_<session id>_<hash of the arguments>"), so
// that CompleteSession finds the very session a backend call was made for,
// even after the conversation has moved on.
func idempotencyKey(sessionID string, slots map[string]any) string {
	b, _ := json.Marshal(slots) // map keys are sorted: canonical
	h := sha256.New()
	h.Write([]byte(sessionID))
	h.Write([]byte{0})
	h.Write(b)
	return "sd_" + strings.ReplaceAll(sessionID, "-", "") + "_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// sessionOfKey is the session id an idempotency key names, or "".
func sessionOfKey(key string) string {
	rest, ok := strings.CutPrefix(key, "sd_")
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok {
		return ""
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return ""
	}
	return u.String()
}
