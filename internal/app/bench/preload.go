package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// throwawayDatabase creates an empty database on the server of adminURL and
// returns its URL and a function that drops it (unless keep).
func throwawayDatabase(ctx context.Context, adminURL string, keep bool, progress io.Writer) (string, func(), error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("bench: the database URL must be a postgres:// URL")
	}
	// pgxpool's parser knows the pool_* parameters a plain connection
	// refuses; the throwaway database's URL keeps them for slotd's pool.
	pcfg, err := pgxpool.ParseConfig(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("bench: the database URL: %w", err)
	}
	admin, err := pgx.ConnectConfig(ctx, pcfg.ConnConfig)
	if err != nil {
		return "", nil, fmt.Errorf("bench: cannot reach Postgres to create a throwaway database: %w", err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "slotd_bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("bench: create database: %w", err)
	}
	fmt.Fprintf(progress, "slotd bench: throwaway database %s\n", name)
	u.Path = "/" + name
	drop := func() {
		if keep {
			fmt.Fprintf(progress, "slotd bench: kept database %s\n", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		admin, err := pgx.ConnectConfig(ctx, pcfg.ConnConfig)
		if err != nil {
			fmt.Fprintf(progress, "slotd bench: drop %s: %v\n", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(progress, "slotd bench: drop %s: %v\n", name, err)
		}
	}
	return u.String(), drop, nil
}

// Preloaded sessions are finished card disputes of tenant "preload", one in
// ten still active, each with its last turn and five slot changes: the
// shape a turn's statements meet in a database that has served a while.
// They were last touched an hour ago, well within the dispute's ttl, so
// that a janitor has nothing to do with them.
const (
	preloadSessions = `INSERT INTO sessions (id, tenant, conversation_id, tool, status, open, version, state,
			last_action, approved_key, locale, time_zone, created_at, updated_at, ended_at)
		SELECT md5('pre-' || g)::uuid, 'preload', 'pre-' || g, 'bank.open_dispute',
			CASE WHEN g % 10 = 0 THEN 'active' ELSE 'completed' END, g % 10 = 0, 5,
			jsonb_build_object('slots', jsonb_build_object('card_last4', lpad((g % 10000)::text, 4, '0'),
				'operation_date', '2026-08-22', 'amount', (g % 90000 + 100)::text || '.00',
				'reason', 'duplicate', 'original_operation_id', 'op-' || g),
				'marks', jsonb_build_object('ready', true)),
			'READY', 'sd_' || md5('key-' || g), 'ru', 'Europe/Moscow',
			now() - interval '2 hours', now() - interval '1 hour',
			CASE WHEN g % 10 = 0 THEN NULL ELSE now() - interval '1 hour' END
		FROM generate_series($1::bigint, $2::bigint) g`
	preloadConversations = `INSERT INTO conversations (tenant, conversation_id, created_at)
		SELECT 'preload', 'pre-' || g, now() - interval '2 days'
		FROM generate_series($1::bigint, $2::bigint) g`
	preloadTurns = `INSERT INTO turns (tenant, conversation_id, turn_id, session_id, tool, version, action, request, response, created_at)
		SELECT 'preload', 'pre-' || g, 'pre-' || g || '/5', md5('pre-' || g)::uuid, 'bank.open_dispute', 5, 'READY',
			jsonb_build_object('conversation_id', 'pre-' || g, 'tool', 'bank.open_dispute', 'turn_id', 'pre-' || g || '/5',
				'arguments', jsonb_build_object('reason', 'duplicate', 'card_last4', '4417'), 'locale', 'ru'),
			$3::jsonb || jsonb_build_object('turn_id', 'pre-' || g || '/5'),
			now() - interval '1 day'
		FROM generate_series($1::bigint, $2::bigint) g`
	preloadChanges = `INSERT INTO slot_changes (tenant, conversation_id, session_id, version, ord, turn_id, slot, old_value, new_value, decision, created_at)
		SELECT 'preload', 'pre-' || g, md5('pre-' || g)::uuid, 1 + o, 0, 'pre-' || g || '/' || (1 + o), s.slot, NULL, s.value, 'FILLED', now() - interval '1 day'
		FROM generate_series($1::bigint, $2::bigint) g,
			LATERAL (VALUES (0, 'card_last4', '"4417"'::jsonb), (1, 'operation_date', '"2026-08-22"'),
				(2, 'amount', '"1200.50"'), (3, 'reason', '"duplicate"'), (4, 'original_operation_id', '"op-1"')) AS s(o, slot, value)`
)

// preloadResponse is a READY response as slotd stores it, about a
// kilobyte.
const preloadResponse = `{"session": {"id": "00000000-0000-0000-0000-000000000000", "conversation_id": "pre", "tool": "bank.open_dispute",
	"status": "active", "version": 5, "slots": {"amount": "1200.50", "card_last4": "4417", "operation_date": "2026-08-22",
	"reason": "duplicate", "original_operation_id": "op-20260822-0117"}, "locale": "ru", "time_zone": "Europe/Moscow",
	"created_at": "2026-08-23T10:00:00Z", "updated_at": "2026-08-23T10:04:00Z"}, "action": "READY",
	"changes": [{"slot": "reason", "old": "duplicate", "new": "duplicate", "decision": "UNCHANGED"},
	{"slot": "card_last4", "old": "4417", "new": "4417", "decision": "UNCHANGED"}],
	"arguments": {"amount": "1200.50", "card_last4": "4417", "operation_date": "2026-08-22", "reason": "duplicate",
	"original_operation_id": "op-20260822-0117"}, "idempotency_key": "sd_0123456789abcdef0123456789abcdef"}`

// preloadBatch is how many sessions one transaction inserts.
const preloadBatch = 50_000

// preload inserts n sessions with their conversations, turns and changes,
// in batches, with set-based SQL, then vacuums and analyzes the tables and
// checkpoints, so that the run measures turns and not the load's aftermath.
func preload(ctx context.Context, pool *pgxpool.Pool, n int, progress io.Writer) error {
	start := time.Now()
	var base int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM conversations WHERE tenant = 'preload'`).Scan(&base); err != nil {
		return fmt.Errorf("bench: preload: %w", err)
	}
	for from := base + 1; from <= base+int64(n); from += preloadBatch {
		to := min(from+preloadBatch-1, base+int64(n))
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
				return err
			}
			for _, q := range []string{preloadConversations, preloadSessions, preloadChanges} {
				if _, err := tx.Exec(ctx, q, from, to); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, preloadTurns, from, to, preloadResponse)
			return err
		})
		if err != nil {
			return fmt.Errorf("bench: preload sessions %d-%d: %w", from, to, err)
		}
		if done := to - base; done%500_000 == 0 || to == base+int64(n) {
			fmt.Fprintf(progress, "slotd bench: preloaded %d of %d sessions (%s)\n", done, n, time.Since(start).Round(time.Second))
		}
	}
	// Vacuum now rather than during the run: the inserts would start
	// autovacuum on every table, and the first reads of the new rows would
	// set their hint bits, writing the pages once more. The checkpoint
	// writes the loaded pages out before the clock starts.
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) conversations, sessions, turns, slot_changes"); err != nil {
		return fmt.Errorf("bench: vacuum: %w", err)
	}
	if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
		// Only a superuser or a member of pg_checkpoint may.
		fmt.Fprintf(progress, "slotd bench: no checkpoint after the preload (%v): one may fall in the run\n", err)
	}
	fmt.Fprintf(progress, "slotd bench: preload vacuumed and checkpointed (%s)\n", time.Since(start).Round(time.Second))
	return nil
}
