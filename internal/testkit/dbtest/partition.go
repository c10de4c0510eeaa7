package dbtest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slotd/slotd/migrations"
)

// partitionVersion is hashed into the partitioned template's name: raise it
// when Partition changes what it builds.
const partitionVersion = 2

// Partitions is how many hash partitions each table of a partitioned
// database has.
const Partitions = 4

// TenantKeyed are the slotd tables that hold no conversation's id and are
// partitioned (and distributed) by tenant alone: the erasure records keep a
// hash of the id they erased, never the id.
var TenantKeyed = []string{"erasures"}

// Reference are the slotd tables that are not partitioned: small, read by
// key, and replicated to every node when distributed (Citus reference
// tables). The contract versions replicas loaded are one.
var Reference = []string{"contract_versions"}

// ConversationKey is the partition key of every other slotd table.
var ConversationKey = []string{"tenant", "conversation_id"}

// PartitionKey is the key a slotd table is partitioned (and distributed) by.
func PartitionKey(table string) []string {
	if slices.Contains(TenantKeyed, table) {
		return []string{"tenant"}
	}
	return ConversationKey
}

// Partition rebuilds every table of the migrated database behind pool,
// except the migrations' version table, as PARTITION BY HASH of its
// PartitionKey with Partitions partitions, keeping each table's columns,
// defaults, checks, keys, indexes and foreign keys as the migrations made
// them. It is generated from the schema, not written out, so it follows
// every new migration; a table without its key's columns, or a primary key
// or unique index without them, fails it, as create_distributed_table fails
// on a table that Citus cannot distribute.
func Partition(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return partition(ctx, tx)
	})
}

type tableDDL struct {
	name        string
	key         []string
	constraints []string // primary keys, unique and exclusion constraints
	indexes     []string // the other indexes
	foreign     []string // foreign keys, added last
}

func partition(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname <> $1
		ORDER BY c.relname`, migrations.VersionTable)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("partition: no tables to partition")
	}
	var tables []*tableDDL
	names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(Reference, n) })
	for _, name := range names {
		t, err := readTable(ctx, tx, name)
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	// The plain tables go under other names, each partitioned one takes its
	// name and rows, then the plain ones are dropped (with the foreign keys
	// between them) and the keys, indexes and foreign keys are made again.
	for _, t := range tables {
		plain := t.name + "_plain"
		keys := make([]string, len(t.key))
		for i, k := range t.key {
			keys[i] = ident(k)
		}
		stmts := []string{
			fmt.Sprintf("ALTER TABLE %s RENAME TO %s", ident(t.name), ident(plain)),
			fmt.Sprintf("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMMENTS INCLUDING COMPRESSION) PARTITION BY HASH (%s)",
				ident(t.name), ident(plain), strings.Join(keys, ", ")),
		}
		for i := range Partitions {
			stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d)",
				ident(fmt.Sprintf("%s_p%d", t.name, i)), ident(t.name), Partitions, i))
		}
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", ident(t.name), ident(plain)))
		if err := exec(ctx, tx, stmts); err != nil {
			return err
		}
	}
	var drop []string
	for _, t := range tables {
		drop = append(drop, ident(t.name+"_plain"))
	}
	if err := exec(ctx, tx, []string{"DROP TABLE " + strings.Join(drop, ", ") + " CASCADE"}); err != nil {
		return err
	}
	for _, phase := range []func(*tableDDL) []string{
		func(t *tableDDL) []string { return t.constraints },
		func(t *tableDDL) []string { return t.indexes },
		func(t *tableDDL) []string { return t.foreign },
	} {
		for _, t := range tables {
			if err := exec(ctx, tx, phase(t)); err != nil {
				return fmt.Errorf("partition: table %s by (%s): %w", t.name, strings.Join(t.key, ", "), err)
			}
		}
	}
	return nil
}

// readTable reads what partition makes again of the table name: its key,
// constraints, indexes and foreign keys.
func readTable(ctx context.Context, tx pgx.Tx, name string) (*tableDDL, error) {
	t := &tableDDL{name: name, key: PartitionKey(name)}
	var cols []string
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(attname::text), '{}') FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, ident(name)).Scan(&cols); err != nil {
		return nil, err
	}
	for _, k := range t.key {
		if !slices.Contains(cols, k) {
			return nil, fmt.Errorf("partition: table %s has no column %s of its partition key (%s)", name, k, strings.Join(t.key, ", "))
		}
	}
	rows, err := tx.Query(ctx, `SELECT contype::text, format('ALTER TABLE %I ADD CONSTRAINT %I %s', $2::text, conname, pg_get_constraintdef(oid))
		FROM pg_constraint WHERE conrelid = $1::regclass AND contype IN ('p', 'u', 'x', 'f')
		ORDER BY conname`, ident(name), name)
	if err != nil {
		return nil, err
	}
	var kind, ddl string
	if _, err := pgx.ForEachRow(rows, []any{&kind, &ddl}, func() error {
		if kind == "f" {
			t.foreign = append(t.foreign, ddl)
		} else {
			t.constraints = append(t.constraints, ddl)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i
		WHERE i.indrelid = $1::regclass
		  AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u', 'x'))
		ORDER BY i.indexrelid::regclass::text`, ident(name))
	if err != nil {
		return nil, err
	}
	if t.indexes, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, err
	}
	return t, nil
}

func exec(ctx context.Context, tx pgx.Tx, stmts []string) error {
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}
