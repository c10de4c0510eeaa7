package dbtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/migrations"
)

// schemaOf describes the slotd tables of a database, one line per column,
// constraint and index, as Postgres prints them, with nothing that only
// partitioning changes (ON ONLY, the partitions themselves).
func schemaOf(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	ctx := t.Context()
	rows, err := pool.Query(ctx, `
		SELECT format('column %s.%s %s %s default %s', c.table_name, c.column_name, c.data_type, c.is_nullable, coalesce(c.column_default, '-'))
		  FROM information_schema.columns c JOIN pg_class r ON r.relname = c.table_name AND r.relnamespace = current_schema()::regnamespace
		 WHERE c.table_schema = current_schema() AND NOT r.relispartition
		UNION ALL
		SELECT format('constraint %s.%s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
		  FROM pg_constraint WHERE connamespace = current_schema()::regnamespace AND conparentid = 0
		   AND NOT (SELECT relispartition FROM pg_class WHERE oid = conrelid)
		UNION ALL
		SELECT 'index ' || replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON ')
		  FROM pg_index i JOIN pg_class r ON r.oid = i.indrelid
		 WHERE r.relnamespace = current_schema()::regnamespace AND NOT r.relispartition
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// The partitioned database has the migrated schema's columns, defaults,
// checks, keys, indexes and foreign keys, and every slotd table in it is
// hash-partitioned by its key.
func TestPartitionedDatabaseHasTheMigratedSchema(t *testing.T) {
	t.Parallel()
	plain, _ := NewPool(t)
	parted, _ := NewPartitionedPool(t)
	want, got := schemaOf(t, plain), schemaOf(t, parted)
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("the partitioned schema lacks %s", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("the partitioned schema has %s, which the migrated one does not", l)
		}
	}
	if v, err := migrations.Current(t.Context(), parted); err != nil || v != migrations.Latest() {
		t.Errorf("partitioned database at version %d, %v; want %d", v, err, migrations.Latest())
	}
	rows, err := parted.Query(t.Context(), `
		SELECT c.relname, c.relkind::text, coalesce(pg_get_partkeydef(c.oid), ''),
		       (SELECT count(*) FROM pg_inherits WHERE inhparent = c.oid)
		  FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		   AND NOT c.relispartition AND c.relname <> $1 ORDER BY 1`, migrations.VersionTable)
	if err != nil {
		t.Fatal(err)
	}
	var name, kind, key string
	var parts int
	tables := 0
	if _, err := pgx.ForEachRow(rows, []any{&name, &kind, &key, &parts}, func() error {
		tables++
		if slices.Contains(Reference, name) {
			if kind != "r" || parts != 0 {
				t.Errorf("reference table %s: kind %s, %d partitions; want a plain table", name, kind, parts)
			}
			return nil
		}
		wantKey := "HASH (" + strings.Join(PartitionKey(name), ", ") + ")"
		if kind != "p" || key != wantKey || parts != Partitions {
			t.Errorf("table %s: kind %s, key %q, %d partitions; want partitioned by %s in %d", name, kind, key, parts, wantKey, Partitions)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if tables < 4 {
		t.Errorf("the partitioned database has %d slotd tables, want every one of the migrated schema", tables)
	}
}

// A unique index that lacks the conversation's key, such as one on a
// session id alone, cannot be partitioned (nor distributed): Partition
// fails and names the table.
func TestPartitionRefusesAGlobalUniqueIndex(t *testing.T) {
	t.Parallel()
	for what, ddl := range map[string]string{
		"a unique index on id alone": `CREATE TABLE things (tenant text, conversation_id text, id uuid);
			CREATE UNIQUE INDEX things_id ON things (id)`,
		"a primary key without the conversation": `CREATE TABLE things (tenant text, conversation_id text, id uuid PRIMARY KEY)`,
		"no conversation column":                 `CREATE TABLE things (tenant text, id uuid)`,
	} {
		pool := Connect(t, NewEmptyDatabase(t))
		if _, err := pool.Exec(context.Background(), ddl); err != nil {
			t.Fatal(err)
		}
		err := Partition(t.Context(), pool)
		if err == nil || !strings.Contains(err.Error(), "things") {
			t.Errorf("partitioning %s = %v; want an error naming the table", what, err)
		}
	}
}
