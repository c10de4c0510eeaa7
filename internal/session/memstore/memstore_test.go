package memstore_test

import (
	"testing"

	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/memstore"
	"github.com/slotd/slotd/internal/session/sessiontest"
)

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store { return memstore.New() })
}
