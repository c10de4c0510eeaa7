//go:build slotd_nologline

package bench

import (
	"io"
	"log/slog"

	"github.com/slotd/slotd/internal/logline"
)

func serverHandler(w io.Writer) slog.Handler {
	return slog.NewJSONHandler(escaping{w}, nil)
}

// escaping writes each line with its invisible characters escaped, as
// logline does.
type escaping struct{ w io.Writer }

func (e escaping) Write(p []byte) (int, error) {
	if _, err := e.w.Write(logline.EscapeInvisible(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
