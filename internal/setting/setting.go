// Package setting is what every component's Config.Validate answers: the
// setting at fault, by its field in the component's Config, and what is
// wrong with its value. A Config that holds others' (server.Config holds
// session.Config as Session) names their fields by path ("Session.TTL"),
// and slotd serve turns a path into its flag and variable.
package setting

import (
	"errors"
	"fmt"
	"time"
)

// Error is a setting whose value a component refuses.
type Error struct {
	// Field is the setting's field in its Config, or its path from an
	// enclosing Config ("MCP.SessionIdle").
	Field string
	// Reason says what the value must be, and what it is.
	Reason string
}

func (e *Error) Error() string { return e.Field + " " + e.Reason }

// Invalid is the error of field with the reason format says.
func Invalid(field, format string, args ...any) error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// In names the fields of err's settings from the enclosing Config, in which
// the component's Config is the field component. Other errors pass as they
// are.
func In(component string, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Field: component + "." + e.Field, Reason: e.Reason}
}

// AtLeast refuses an int below least.
func AtLeast(field string, v, least int) error {
	if v < least {
		return Invalid(field, "must be at least %d, not %d", least, v)
	}
	return nil
}

// Positive refuses a duration of 0 or less.
func Positive(field string, d time.Duration) error {
	if d <= 0 {
		return Invalid(field, "must be more than 0, not %s", d)
	}
	return nil
}

// NotNegative refuses a negative duration.
func NotNegative(field string, d time.Duration) error {
	if d < 0 {
		return Invalid(field, "must be 0 or more, not %s", d)
	}
	return nil
}

// First is the first error of errs that is not nil.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
