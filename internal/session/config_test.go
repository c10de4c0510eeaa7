package session_test

import (
	"errors"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
	"github.com/slotd/slotd/internal/setting"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	in := session.Config{TTL: time.Hour, MaxOpenSessions: 2}
	got := in.WithDefaults()
	if in.MaxAttempts != 0 || in.Clock != nil {
		t.Errorf("WithDefaults changed its receiver: %+v", in)
	}
	if got.MaxAttempts != session.DefaultMaxAttempts || got.ClockWindow != session.DefaultClockWindow ||
		got.MaxOpenSessions != 2 || got.TTL != time.Hour || got.StaleAfter != 0 || got.Clock == nil {
		t.Errorf("WithDefaults = %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate of the defaults: %v", err)
	}
}

func TestConfigValidateNamesTheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg   session.Config
		field string
	}{
		{session.Config{MaxAttempts: -1}, "MaxAttempts"},
		{session.Config{MaxOpenSessions: -3}, "MaxOpenSessions"},
		{session.Config{TTL: -time.Minute}, "TTL"},
		{session.Config{StaleAfter: -time.Second}, "StaleAfter"},
		{session.Config{ClockWindow: -time.Second}, "ClockWindow"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		var bad *setting.Error
		if !errors.As(err, &bad) || bad.Field != tc.field {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
}

// The engine is built with its settings, and refuses settings out of range.
func TestNewEngineTakesItsConfig(t *testing.T) {
	t.Parallel()
	cat := sessiontest.Catalog(t)
	e := session.NewEngine(memstore.New(), cat, session.Config{Clock: func() time.Time { return sessiontest.Now }, StaleAfter: 7 * time.Minute, TTL: 9 * time.Hour})
	if stale, ttl := e.Lifetimes("no-such-tool"); stale != 7*time.Minute || ttl != 9*time.Hour {
		t.Errorf("Lifetimes = %v, %v; want the Config's 7m and 9h", stale, ttl)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewEngine took a negative MaxAttempts")
		}
	}()
	session.NewEngine(memstore.New(), cat, session.Config{MaxAttempts: -1})
}
