package mcp

import (
	"errors"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/setting"
)

// The body bound and the call timeout are settings of Limits, no longer
// constants of the endpoint's own.
func TestLimitsHoldBodyAndCallTimeout(t *testing.T) {
	t.Parallel()
	got := Limits{MaxBodyBytes: 4096}.WithDefaults()
	if got.MaxBodyBytes != 4096 || got.CallTimeout != DefaultCallTimeout || got.MaxSessions != DefaultMaxSessions {
		t.Errorf("WithDefaults = %+v", got)
	}
	for _, tc := range []struct {
		l     Limits
		field string
	}{
		{Limits{MaxBodyBytes: -1}, "MaxBodyBytes"},
		{Limits{CallTimeout: -time.Second}, "CallTimeout"},
		{Limits{SessionIdle: -time.Second}, "SessionIdle"},
		{Limits{MaxTenantForms: -1}, "MaxTenantForms"},
	} {
		err := tc.l.WithDefaults().Validate()
		var bad *setting.Error
		if !errors.As(err, &bad) || bad.Field != tc.field {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.l, err, tc.field)
		}
	}
}
