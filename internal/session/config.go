package session

import (
	"time"

	"github.com/slotd/slotd/internal/setting"
)

// Config is the engine's settings: the server's answers to what contracts
// leave open, and its clock. Zero fields take the defaults
// (WithDefaults), but StaleAfter, TTL and TrustClientClock, whose zero
// values mean what they say.
type Config struct {
	// StaleAfter and TTL are the lifetimes of sessions whose contract sets
	// none; 0 means none (a session never goes stale, never expires).
	StaleAfter time.Duration
	TTL        time.Duration
	// MaxAttempts is how many failed attempts a slot gets before a
	// hand-off, for slots without x-slotd.max_attempts; 0 means
	// DefaultMaxAttempts.
	MaxAttempts int
	// TrustClientClock accepts any `now` a caller sends (replays, scripts,
	// tests). Otherwise `now` must be within ClockWindow of the server's
	// clock, so that no client can date its sessions past their lifetimes.
	TrustClientClock bool
	// ClockWindow is how far a caller's `now` may be from the server's
	// clock; 0 means DefaultClockWindow.
	ClockWindow time.Duration
	// MaxOpenSessions bounds a conversation's open sessions; past it the
	// least recently used one ends. 0 means DefaultMaxOpenSessions.
	MaxOpenSessions int
	// Clock is the server's clock, used when a turn brings none; time.Now
	// when nil.
	Clock func() time.Time
}

// DefaultMaxOpenSessions is how many tools a conversation may have open.
const DefaultMaxOpenSessions = 8

// DefaultMaxAttempts: the first retry fixes most refused values, the second
// fewer, the third almost none.
const DefaultMaxAttempts = 3

// DefaultClockWindow is how far a caller's clock may be off the server's.
const DefaultClockWindow = 5 * time.Minute

// WithDefaults is a copy of c with its zero fields set to the defaults.
func (c Config) WithDefaults() Config {
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.ClockWindow == 0 {
		c.ClockWindow = DefaultClockWindow
	}
	if c.MaxOpenSessions == 0 {
		c.MaxOpenSessions = DefaultMaxOpenSessions
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// Validate says which setting of c, after WithDefaults, is out of range
// (a *setting.Error), or nil.
func (c Config) Validate() error {
	return setting.First(
		setting.NotNegative("StaleAfter", c.StaleAfter),
		setting.NotNegative("TTL", c.TTL),
		setting.AtLeast("MaxAttempts", c.MaxAttempts, 1),
		setting.Positive("ClockWindow", c.ClockWindow),
		setting.AtLeast("MaxOpenSessions", c.MaxOpenSessions, 1),
	)
}
