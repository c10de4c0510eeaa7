package dbtest

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Sweep drops every database on the server of adminURL whose name starts
// with prefix, templates included, and returns the names of those that
// were not templates: databases some test left behind. Templates outlive
// the test binary that made them so that the next binary clones them;
// a run that ends sweeps them. A connection still open to a database is
// closed (DROP DATABASE ... WITH (FORCE)), so run it only when the tests
// using prefix have ended.
func Sweep(ctx context.Context, adminURL, prefix string) (left []string, err error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("dbtest: sweep: %w", err)
	}
	defer admin.Close(ctx)
	rows, err := admin.Query(ctx, `SELECT datname, datistemplate FROM pg_database
		WHERE starts_with(datname, $1) ORDER BY datname`, prefix)
	if err != nil {
		return nil, fmt.Errorf("dbtest: sweep: %w", err)
	}
	type db struct {
		name     string
		template bool
	}
	var dbs []db
	var d db
	if _, err := pgx.ForEachRow(rows, []any{&d.name, &d.template}, func() error {
		dbs = append(dbs, d)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("dbtest: sweep: %w", err)
	}
	for _, d := range dbs {
		if d.template {
			if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident(d.name)+" WITH IS_TEMPLATE false"); err != nil {
				return left, fmt.Errorf("dbtest: sweep %s: %w", d.name, err)
			}
		}
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(d.name)+" WITH (FORCE)"); err != nil {
			return left, fmt.Errorf("dbtest: sweep %s: %w", d.name, err)
		}
		// A template whose maker died before marking it is a template
		// all the same: its name says so.
		if !d.template && !strings.HasPrefix(d.name, prefix+"template_") {
			left = append(left, d.name)
		}
	}
	return left, nil
}
