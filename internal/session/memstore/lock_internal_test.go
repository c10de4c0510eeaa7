package memstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slotd/slotd/internal/session"
)

// A wait for a held conversation that its context ends is the context's
// error, a passed deadline or a cancelled call, never a busy conversation.
func TestLockWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	held := &conversation{lock: make(chan struct{}, 1)}
	held.lock <- struct{}{}

	expired, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := lockConversation(expired, held)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, session.ErrBusy) {
		t.Errorf("a wait past its deadline = %v, want the deadline's error and not busy", err)
	}

	gaveUp, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err = lockConversation(gaveUp, held)
	if !errors.Is(err, context.Canceled) || errors.Is(err, session.ErrBusy) {
		t.Errorf("a wait its caller gave up on = %v, want the cancellation and not busy", err)
	}

	<-held.lock
	if err := lockConversation(context.Background(), held); err != nil {
		t.Errorf("a free conversation: %v", err)
	}
}
