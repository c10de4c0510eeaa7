//go:build !slotd_nologline

package bench

import (
	"io"
	"log/slog"

	"github.com/slotd/slotd/internal/logline"
)

// serverHandler is the in-process slotd's log handler, slotd serve's own.
// A build with the tag slotd_nologline uses slog's JSON handler instead,
// for make bench-fastpaths to measure what logline saves.
func serverHandler(w io.Writer) slog.Handler { return logline.NewJSON(w, nil) }
