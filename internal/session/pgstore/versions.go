package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/slotd/slotd/internal/session"
)

var _ session.VersionStore = (*Store)(nil)

const (
	// registerVersion keeps a version's document and first sighting, and
	// moves its last one.
	registerVersion = `INSERT INTO contract_versions AS v (tool, version, document, first_seen, replica, last_seen, last_replica)
		VALUES ($1, $2, $3, $4, $5, $4, $5)
		ON CONFLICT (tool, version) DO UPDATE SET last_seen = greatest(v.last_seen, EXCLUDED.last_seen), last_replica = EXCLUDED.last_replica
		RETURNING tool, version, document, first_seen, replica, last_seen, last_replica`
	selectVersion = `SELECT tool, version, document, first_seen, replica, last_seen, last_replica
		FROM contract_versions WHERE tool = $1 AND version = $2`
	// selectVersions counts each version's active sessions by a scan of
	// the active sessions: an operator's command, not a turn's.
	selectVersions = `SELECT v.tool, v.version, v.document, v.first_seen, v.replica, v.last_seen, v.last_replica,
			(SELECT count(*) FROM sessions s WHERE s.status = 'active' AND s.tool = v.tool AND s.contract_version = v.version)
		FROM contract_versions v WHERE $1 = '' OR v.tool = $1 ORDER BY v.tool, v.first_seen, v.version`
)

// RegisterVersions implements session.VersionStore, in one transaction.
func (st *Store) RegisterVersions(ctx context.Context, vs []session.ContractVersion) ([]session.ContractVersion, error) {
	var out []session.ContractVersion
	err := pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
		out = out[:0]
		for _, v := range vs {
			cv, err := scanVersion(tx.QueryRow(ctx, registerVersion, v.Tool, v.Version, string(v.Document), v.FirstSeen, v.Replica))
			if err != nil {
				return err
			}
			out = append(out, *cv)
		}
		return nil
	})
	if err != nil {
		return nil, interpret(err)
	}
	return out, nil
}

// ContractVersion implements session.VersionStore.
func (st *Store) ContractVersion(ctx context.Context, tool, version string) (*session.ContractVersion, error) {
	cv, err := scanVersion(st.pool.QueryRow(ctx, selectVersion, tool, version))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, interpret(err)
	}
	return cv, nil
}

// ContractVersions implements session.VersionStore.
func (st *Store) ContractVersions(ctx context.Context, tool string) ([]session.ContractVersion, error) {
	rows, err := st.pool.Query(ctx, selectVersions, tool)
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.ContractVersion, error) {
		var cv session.ContractVersion
		err := r.Scan(&cv.Tool, &cv.Version, &cv.Document, &cv.FirstSeen, &cv.Replica, &cv.LastSeen, &cv.LastReplica, &cv.Active)
		return cv, err
	})
	if err != nil {
		return nil, interpret(err)
	}
	return out, nil
}

func scanVersion(row pgx.Row) (*session.ContractVersion, error) {
	var cv session.ContractVersion
	if err := row.Scan(&cv.Tool, &cv.Version, &cv.Document, &cv.FirstSeen, &cv.Replica, &cv.LastSeen, &cv.LastReplica); err != nil {
		return nil, err
	}
	cv.FirstSeen, cv.LastSeen = cv.FirstSeen.UTC(), cv.LastSeen.UTC()
	return &cv, nil
}
