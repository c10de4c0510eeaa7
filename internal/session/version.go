package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/problem"
)

// A contract's version is the hash of its canonical JSON (contract.Canonical).
// A session records the version it started with (Session.ContractVersion),
// and every replica writes the versions it loaded to a VersionStore, so
// that any replica can serve a session of any version: with x-slotd.upgrade
// "pin" (the default) the session finishes on its version; with "migrate"
// the next turn on a replica that holds a newer version moves it there,
// once and never back, slot by slot (the migrate stage below).

// ContractVersion is one version of a tool's contract as the store keeps it.
type ContractVersion struct {
	Tool    string
	Version string
	// Document is the contract's canonical JSON.
	Document []byte
	// FirstSeen is when a replica first loaded the version, and Replica
	// which one; LastSeen and LastReplica the latest start that loaded it.
	FirstSeen   time.Time
	Replica     string
	LastSeen    time.Time
	LastReplica string
	// Active counts the active sessions on the version (ContractVersions
	// only).
	Active int64
}

// VersionStore keeps the contract versions replicas loaded. pgstore and
// memstore implement it.
type VersionStore interface {
	// RegisterVersions writes the versions a replica loaded (an existing
	// one keeps its document and first sighting) and returns them as
	// stored.
	RegisterVersions(ctx context.Context, vs []ContractVersion) ([]ContractVersion, error)
	// ContractVersion reads one version; ErrNotFound when none is stored.
	ContractVersion(ctx context.Context, tool, version string) (*ContractVersion, error)
	// ContractVersions lists the stored versions (of tool, when given), by
	// tool and first sighting, with their active sessions counted.
	ContractVersions(ctx context.Context, tool string) ([]ContractVersion, error)
}

// Versions serves the contract versions sessions need: the catalog's own,
// and older or newer ones read once from the store and kept in memory by
// their hash, so that a turn on a version the replica did not load reads
// the store once per process, and a turn on the replica's own version
// costs a string comparison.
type Versions struct {
	store   VersionStore
	catalog *contract.Catalog

	mu    sync.RWMutex
	known map[string]knownVersion // tool + " " + version
}

type knownVersion struct {
	c         *contract.Contract
	firstSeen time.Time
}

// NewVersions serves catalog's versions and those store holds.
func NewVersions(store VersionStore, catalog *contract.Catalog) *Versions {
	return &Versions{store: store, catalog: catalog, known: map[string]knownVersion{}}
}

// Register writes the catalog's versions to the store as loaded by
// replica at now, and learns when each was first seen: a version another
// replica loaded earlier is older than one loaded first now.
func (v *Versions) Register(ctx context.Context, replica string, now time.Time) ([]ContractVersion, error) {
	var vs []ContractVersion
	for _, c := range v.catalog.All() {
		vs = append(vs, ContractVersion{Tool: c.Name, Version: c.Version, Document: c.Canonical,
			FirstSeen: now, Replica: replica, LastSeen: now, LastReplica: replica})
	}
	stored, err := v.store.RegisterVersions(ctx, vs)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range stored {
		if c := v.catalog.Get(s.Tool); c != nil && c.Version == s.Version {
			v.known[s.Tool+" "+s.Version] = knownVersion{c: c, firstSeen: s.FirstSeen}
		}
	}
	return stored, nil
}

// Get is the contract of tool at version and when it was first seen;
// ErrNotFound when the store holds no such version (never loaded, or
// purged).
func (v *Versions) Get(ctx context.Context, tool, version string) (*contract.Contract, time.Time, error) {
	if kv, ok := v.cached(tool, version); ok {
		return kv.c, kv.firstSeen, nil
	}
	cv, err := v.store.ContractVersion(ctx, tool, version)
	if err != nil {
		return nil, time.Time{}, err
	}
	c, err := contract.Parse(tool+"@"+version, cv.Document)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("session: stored contract %s version %s: %w", tool, version, err)
	}
	if c.Name != tool || c.Version != version {
		return nil, time.Time{}, fmt.Errorf("session: stored contract %s version %s holds %s version %s", tool, version, c.Name, c.Version)
	}
	v.mu.Lock()
	v.known[tool+" "+version] = knownVersion{c: c, firstSeen: cv.FirstSeen}
	v.mu.Unlock()
	return c, cv.FirstSeen, nil
}

// cached is tool's version as this replica knows it already, without the
// store.
func (v *Versions) cached(tool, version string) (knownVersion, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	kv, ok := v.known[tool+" "+version]
	return kv, ok
}

// firstSeen is when the catalog's version of c was first seen; zero when
// Register has not run.
func (v *Versions) firstSeen(c *contract.Contract) time.Time {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.known[c.Name+" "+c.Version].firstSeen
}

// UseVersions makes the engine serve sessions of every stored version of
// their tool; without it a session goes on with the catalog's contract.
func (e *Engine) UseVersions(v *Versions) { e.versions = v }

// upgrade is what a turn does about its tool's open session started on
// another version than the catalog's: go on pinned to that version
// (contract), or migrate from it to the catalog's, or, when the store no
// longer holds it, refuse (gone).
type upgrade struct {
	version  string
	contract *contract.Contract
	migrate  bool
	gone     bool
}

// versionNeed is what upgradeOf returns, from inside the store's unit of
// work, when the open session's version is not known to this replica yet:
// the turn reads it from the store outside that unit of work and runs
// again. Read inside it, with the unit's connection held, a burst of turns
// as large as the pool would each wait for a connection none of them gives
// back (a rolling deploy's first turns on a new replica).
type versionNeed struct{ tool, version string }

func (n *versionNeed) Error() string {
	return fmt.Sprintf("session: contract %s version %s is not loaded yet", n.tool, n.version)
}

// fetched is a version read from the store for a turn that needed it:
// its contract and first sighting, or gone when the store no longer holds
// it.
type fetched struct {
	tool, version string
	contract      *contract.Contract
	seen          time.Time
	gone          bool
}

// fetchVersion reads the version a turn needs, outside its unit of work.
func (e *Engine) fetchVersion(ctx context.Context, n *versionNeed) (*fetched, error) {
	c, seen, err := e.versions.Get(ctx, n.tool, n.version)
	switch {
	case errors.Is(err, ErrNotFound):
		return &fetched{tool: n.tool, version: n.version, gone: true}, nil
	case err != nil:
		return nil, err
	}
	return &fetched{tool: n.tool, version: n.version, contract: c, seen: seen}, nil
}

// upgradeOf works out, outside the plan and without the store, what the
// turn's tool's open session needs of its version: nothing when it is
// the catalog's. A version this replica has not loaded is taken from got,
// what the turn read before; a *versionNeed when it has not read it.
func (e *Engine) upgradeOf(c *contract.Contract, open []*Session, got *fetched) (*upgrade, error) {
	if e.versions == nil {
		return nil, nil
	}
	var s *Session
	for _, o := range open {
		if o.Tool == c.Name && o.Status == Active {
			s = o
		}
	}
	if s == nil || s.ContractVersion == "" || s.ContractVersion == c.Version {
		return nil, nil
	}
	var old *contract.Contract
	var seen time.Time
	if kv, ok := e.versions.cached(c.Name, s.ContractVersion); ok {
		old, seen = kv.c, kv.firstSeen
	} else if got != nil && got.tool == c.Name && got.version == s.ContractVersion {
		if got.gone {
			return &upgrade{version: s.ContractVersion, gone: true}, nil
		}
		old, seen = got.contract, got.seen
	} else {
		return nil, &versionNeed{tool: c.Name, version: s.ContractVersion}
	}
	u := &upgrade{version: s.ContractVersion, contract: old}
	// Only a newer version takes a session over: a replica still on the
	// older file serves a migrated session on its new version, pinned.
	if mine := e.versions.firstSeen(c); c.Upgrade == contract.Migrate &&
		(mine.After(seen) || mine.Equal(seen) && !mine.IsZero() && c.Version > s.ContractVersion) {
		u.migrate = true
	}
	return u, nil
}

// pin makes the turn work on the contract version its session started
// with, or prepares the move to the newest one.
func (t *turn) pin() error {
	u := t.in.upgrade
	if u == nil || t.s == nil || t.s.ContractVersion != u.version {
		return nil
	}
	switch {
	case u.gone:
		return versionGone(t.c.Name, u.version)
	case u.migrate:
		t.from = u.contract
	default:
		t.c = u.contract
	}
	return nil
}

// Migration is how a turn moved its session to a newer contract version.
type Migration struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Dropped are the slots the new version no longer has; Refused those
	// whose values it refuses (asked again, with the allowed values);
	// Reconfirm those it made irreversible (re-confirmed before approval).
	Dropped   []string `json:"dropped,omitempty"`
	Refused   []string `json:"refused,omitempty"`
	Reconfirm []string `json:"reconfirm,omitempty"`
}

// migrate moves the session from t.from to the catalog's version, slot by
// slot, each move a change in the history that names both versions.
func (t *turn) migrate() {
	from, to, s := t.from, t.c, t.s
	m := &Migration{From: s.ContractVersion, To: to.Version}
	note := fmt.Sprintf("%s %s -> %s", to.Name, m.From, m.To)
	for _, slot := range slotOrder(from, s.State.Slots) {
		v := s.State.Slots[slot]
		p := to.Property(slot)
		if p == nil {
			delete(s.State.Slots, slot)
			delete(s.State.Pending, slot)
			m.Dropped = append(m.Dropped, slot)
			t.migrated(merge.Change{Slot: slot, Old: v, Decision: merge.Cleared}, note+": no such slot")
			continue
		}
		nv, fe := to.Normalize(slot, v, t.env)
		if fe != nil {
			delete(s.State.Slots, slot)
			delete(s.State.Pending, slot)
			m.Refused = append(m.Refused, slot)
			t.rejected = append(t.rejected, slot)
			t.refused = append(t.refused, *fe)
			t.migrated(merge.Change{Slot: slot, Old: v, New: v, Decision: merge.Rejected}, note+": value refused")
			continue
		}
		s.State.Slots[slot] = nv
		if fp := from.Property(slot); p.Irreversible && (fp == nil || !fp.Irreversible) {
			if _, waiting := s.State.Pending[slot]; !waiting {
				if s.State.Pending == nil {
					s.State.Pending = map[string]any{}
				}
				s.State.Pending[slot] = nv
			}
			m.Reconfirm = append(m.Reconfirm, slot)
			t.migrated(merge.Change{Slot: slot, Old: nv, New: nv, Decision: merge.Pending}, note+": now irreversible, to re-confirm")
			continue
		}
		t.migrated(merge.Change{Slot: slot, Old: v, New: nv, Decision: merge.Migrated}, note)
	}
	for slot := range s.State.Pending {
		if to.Property(slot) == nil {
			delete(s.State.Pending, slot)
		}
	}
	s.ContractVersion = to.Version
	s.ApprovedKey = ""
	t.migration = m
	t.notices = append(t.notices, migrationNotice(t.c, s.Locale, m))
}

// migrated adds a change of the move and the note its history record
// keeps.
func (t *turn) migrated(ch merge.Change, note string) {
	t.changes = append(t.changes, ch)
	t.notes = append(t.notes, note)
}

// migrationNotice says, in the turn's language, that the form changed and
// what became of the session's values.
func migrationNotice(c *contract.Contract, locale string, m *Migration) string {
	list := func(slots []string) string {
		labels := make([]string, len(slots))
		for i, s := range slots {
			labels[i] = s
			if p := c.Property(s); p != nil {
				labels[i] = p.Label(locale, s)
			}
		}
		return strings.Join(labels, ", ")
	}
	var b strings.Builder
	switch locale {
	case "ru":
		b.WriteString("Форма запроса обновилась.")
	case "uk":
		b.WriteString("Форма запиту оновилася.")
	default:
		b.WriteString("The request form was updated.")
	}
	if len(m.Dropped) > 0 {
		switch locale {
		case "ru":
			b.WriteString(" Больше не нужно: " + strings.Join(m.Dropped, ", ") + ".")
		case "uk":
			b.WriteString(" Більше не потрібно: " + strings.Join(m.Dropped, ", ") + ".")
		default:
			b.WriteString(" No longer needed: " + strings.Join(m.Dropped, ", ") + ".")
		}
	}
	if len(m.Refused) > 0 {
		switch locale {
		case "ru":
			b.WriteString(" Нужно уточнить: " + list(m.Refused) + ".")
		case "uk":
			b.WriteString(" Потрібно уточнити: " + list(m.Refused) + ".")
		default:
			b.WriteString(" To be given again: " + list(m.Refused) + ".")
		}
	}
	return b.String()
}

// versionGone refuses a turn on a session whose contract version the
// store no longer holds: slotd never guesses what the session was asked
// under.
func versionGone(tool, version string) error {
	return problem.VersionGone(tool, version)
}
