package session

import (
	"encoding/json"
	"reflect"
)

// turnContent is what a retry of a turn must carry again: the arguments,
// the confirmation, the locale and the time zone. The clock is left out
// (a retry without now runs on a later server clock), and so are the ids
// and the tool, which found the stored turn.
type turnContent struct {
	Arguments    map[string]any `json:"arguments"`
	Confirmation *bool          `json:"confirmation"`
	Locale       string         `json:"locale"`
	TimeZone     string         `json:"time_zone"`
}

// sameContent tells whether req, as the history keeps it (redactRequest),
// has the content of the stored request. Both are compared as JSON decodes
// them, so a number sent as 1200 and kept as 1200 is the same. A stored
// request that cannot be read (erased, or from before requests were kept)
// is taken as the same: a retry is then answered as it always was.
func sameContent(stored []byte, req TurnRequest) bool {
	var was turnContent
	if len(stored) == 0 || json.Unmarshal(stored, &was) != nil {
		return true
	}
	b, err := encodeJSON(req)
	if err != nil {
		return false
	}
	var now turnContent
	if err := json.Unmarshal(b, &now); err != nil {
		return false
	}
	if len(was.Arguments) == 0 && len(now.Arguments) == 0 {
		was.Arguments, now.Arguments = nil, nil
	}
	return reflect.DeepEqual(was, now)
}
