package session

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// TurnRequest is one user turn as the orchestrator sends it.
type TurnRequest struct {
	Tenant         string         `json:"tenant,omitempty"`
	ConversationID string         `json:"conversation_id"`
	Tool           string         `json:"tool"`
	TurnID         string         `json:"turn_id"`
	Arguments      map[string]any `json:"arguments,omitempty"`
	// Confirmation is the user's answer to a RECONFIRM or CONFIRM, or nil.
	Confirmation *bool     `json:"confirmation,omitempty"`
	Locale       string    `json:"locale,omitempty"`
	TimeZone     string    `json:"time_zone,omitempty"`
	Now          time.Time `json:"now,omitempty"`
}

// Limits on a turn request; larger requests are refused before any work.
const (
	maxIDLength   = 256
	maxArguments  = 64
	maxTextLength = 4096
	// maxValues bounds the JSON values in all arguments together, nested
	// ones included; maxDepth bounds their nesting.
	maxValues = 512
	maxDepth  = 8
	// MaxTurnsPerSession bounds a session's history: past it the session
	// must be reset, so that no conversation grows without bound.
	MaxTurnsPerSession = 1000
)

// validate refuses a malformed request before any work: required fields,
// ids that Postgres and logs hold as they are, a locale, and bounded
// arguments.
func (r *TurnRequest) validate() error {
	switch {
	case r.ConversationID == "":
		return problem.InvalidRequest("conversation_id", "required")
	case r.Tool == "":
		return problem.InvalidRequest("tool", "required")
	case r.TurnID == "":
		return problem.InvalidRequest("turn_id", "required: one per logical turn, reused on retries")
	case !validID(r.ConversationID):
		return problem.InvalidRequest("conversation_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	case !validID(r.TurnID):
		return problem.InvalidRequest("turn_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	case !validID(r.Tool):
		return problem.InvalidRequest("tool", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	case !validID(r.Locale) || !validID(r.TimeZone):
		return problem.InvalidRequest("locale", "a BCP 47 tag such as ru, and an IANA zone such as Europe/Moscow")
	case !validTag(r.Locale):
		return problem.InvalidRequest("locale", "a BCP 47 tag such as ru or en-GB")
	case redact.HasCard(r.ConversationID):
		return cardInID("conversation_id")
	case redact.HasCard(r.TurnID):
		return cardInID("turn_id")
	case redact.HasCard(r.Tool):
		return cardInID("tool")
	case redact.HasCard(r.TimeZone):
		return cardInID("time_zone")
	}
	return checkArgs(r.Arguments)
}

// cardInID refuses an id that holds a card number: ids are stored and
// logged as they are, so they must never carry one.
func cardInID(field string) error {
	return problem.InvalidRequest(field, "holds what looks like a full card number; ids must never carry one")
}

// validTag accepts what a BCP 47 tag can be spelt with: ASCII letters and
// digits in subtags of at most eight, split by - (or _), and no card number.
func validTag(s string) bool {
	if len(s) > 35 || redact.HasCard(s) {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '-' || c == '_':
			n = 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			if n++; n > 8 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// checkArgs bounds a turn's arguments: names, values, nesting, and how many
// values they hold together.
func checkArgs(args map[string]any) error {
	if len(args) > maxArguments {
		return problem.InvalidRequest("arguments", fmt.Sprintf("at most %d arguments", maxArguments))
	}
	b := bounds{depth: maxDepth, values: maxValues, text: maxTextLength, field: "arguments"}
	for k, v := range args {
		if len(k) > maxIDLength || !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 {
			return problem.InvalidRequest("arguments", fmt.Sprintf("argument names are at most %d bytes of UTF-8", maxIDLength))
		}
		if redact.HasCard(k) {
			return problem.InvalidRequest("arguments", "an argument name holds what looks like a full card number; never send one")
		}
		if err := b.check("arguments/"+k, v, 1); err != nil {
			return err
		}
	}
	return nil
}

// bounds limit a JSON value a caller sends: its nesting depth, and the
// number of values the field holds in all.
type bounds struct {
	depth  int
	values int
	text   int // bytes of one string
	field  string
	seen   int
}

// check bounds one value: string length, NUL characters, non-finite
// numbers, nesting depth, and the number of values.
func (b *bounds) check(path string, v any, depth int) error {
	if b.seen++; b.seen > b.values {
		return problem.InvalidRequest(b.field, fmt.Sprintf("at most %d values in all %s together", b.values, b.field))
	}
	if depth > b.depth {
		return problem.InvalidRequest(path, fmt.Sprintf("nested deeper than %d levels", b.depth))
	}
	switch t := v.(type) {
	case string:
		if len(t) > b.text {
			return problem.InvalidRequest(path, fmt.Sprintf("at most %d bytes", b.text))
		}
		if strings.IndexByte(t, 0) >= 0 {
			return problem.InvalidRequest(path, "contains a NUL character")
		}
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return problem.InvalidRequest(path, "not a finite number")
		}
	case map[string]any:
		for k, x := range t {
			if len(k) > b.text || strings.IndexByte(k, 0) >= 0 || !utf8.ValidString(k) {
				return problem.InvalidRequest(path, fmt.Sprintf("keys are at most %d bytes of UTF-8 without NUL", b.text))
			}
			if err := b.check(path+"/"+k, x, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := b.check(path+"/"+strconv.Itoa(i), x, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// validID accepts an identifier that Postgres text and logs can hold as is.
func validID(s string) bool {
	return len(s) <= maxIDLength && utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

func (l Lookup) validate() error {
	if l.ConversationID == "" && l.SessionID == "" {
		return problem.InvalidRequest("conversation_id", "conversation_id or session_id is required")
	}
	if !validID(l.ConversationID) || !validID(l.Tenant) {
		return problem.InvalidRequest("conversation_id", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	}
	if !validID(l.Tool) {
		return problem.InvalidRequest("tool", fmt.Sprintf("at most %d bytes of UTF-8 without control characters", maxIDLength))
	}
	if redact.HasCard(l.ConversationID) {
		return cardInID("conversation_id")
	}
	if redact.HasCard(l.Tool) || redact.HasCard(l.Tenant) {
		return cardInID("tool")
	}
	if l.SessionID != "" && !CanonicalID(l.SessionID) {
		return problem.InvalidRequest("session_id", "a session id as slotd gives it: a UUID such as 019ad0c4-5b1e-7c3a-9f00-1e2d3c4b5a69")
	}
	return nil
}

// CanonicalID reports whether s is a UUID in its canonical form (36
// characters, lower- or upper-case hex), the only form session ids take.
func CanonicalID(s string) bool {
	if len(s) != 36 {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && strings.EqualFold(u.String(), s)
}
