package server

import "github.com/slotd/slotd/internal/redact"

// MaskID is how the server's log lines show an id, for tests.
var MaskID = redact.LoggedID
