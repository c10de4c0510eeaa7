package api

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/setting"
)

func TestLimitsWithDefaults(t *testing.T) {
	t.Parallel()
	in := Limits{MaxInFlight: 10, MaxDeadline: time.Minute}
	got := in.WithDefaults()
	if in.MaxRequestBytes != 0 || in.MaxStreams != 0 {
		t.Errorf("WithDefaults changed its receiver: %+v", in)
	}
	want := Limits{MaxRequestBytes: DefaultMaxRequestBytes, MaxInFlight: 10, MaxRunning: 4 * runtime.GOMAXPROCS(0),
		DefaultDeadline: DefaultDeadline, MaxDeadline: time.Minute, MaxStreams: DefaultMaxStreams}
	if got.MaxRequestBytes != want.MaxRequestBytes || got.MaxInFlight != want.MaxInFlight || got.MaxRunning != want.MaxRunning ||
		got.DefaultDeadline != want.DefaultDeadline || got.MaxDeadline != want.MaxDeadline || got.MaxStreams != want.MaxStreams ||
		got.TenantMaxInFlight != 0 || got.TenantMaxRunning != 0 {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate of the defaults: %v", err)
	}
}

func TestLimitsValidateNamesTheLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		l     Limits
		field string
	}{
		{Limits{MaxInFlight: -1}, "MaxInFlight"},
		{Limits{TenantMaxInFlight: -4}, "TenantMaxInFlight"},
		{Limits{DefaultDeadline: -time.Second}, "DefaultDeadline"},
		{Limits{MaxStreams: -2}, "MaxStreams"},
		{Limits{TenantLimits: map[string]int{"bank": 0}}, "TenantLimits"},
	} {
		err := tc.l.WithDefaults().Validate()
		var bad *setting.Error
		if !errors.As(err, &bad) || bad.Field != tc.field {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.l, err, tc.field)
		}
	}
}
