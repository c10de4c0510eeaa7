package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/slotd/slotd/internal/session"
)

// versions are the contract versions registered with the store.
type versions struct {
	mu   sync.Mutex
	byID map[string]session.ContractVersion // tool + " " + version
}

func (st *Store) versions() *versions {
	v := &st.contracts
	v.mu.Lock()
	if v.byID == nil {
		v.byID = map[string]session.ContractVersion{}
	}
	v.mu.Unlock()
	return v
}

var _ session.VersionStore = (*Store)(nil)

// RegisterVersions implements session.VersionStore.
func (st *Store) RegisterVersions(_ context.Context, vs []session.ContractVersion) ([]session.ContractVersion, error) {
	v := st.versions()
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]session.ContractVersion, 0, len(vs))
	for _, cv := range vs {
		k := cv.Tool + " " + cv.Version
		if old, ok := v.byID[k]; ok {
			old.LastSeen, old.LastReplica = cv.LastSeen, cv.LastReplica
			cv = old
		}
		cv.Document = slices.Clone(cv.Document)
		v.byID[k] = cv
		out = append(out, cv)
	}
	return out, nil
}

// ContractVersion implements session.VersionStore.
func (st *Store) ContractVersion(_ context.Context, tool, version string) (*session.ContractVersion, error) {
	v := st.versions()
	v.mu.Lock()
	defer v.mu.Unlock()
	cv, ok := v.byID[tool+" "+version]
	if !ok {
		return nil, session.ErrNotFound
	}
	return &cv, nil
}

// ContractVersions implements session.VersionStore.
func (st *Store) ContractVersions(_ context.Context, tool string) ([]session.ContractVersion, error) {
	v := st.versions()
	v.mu.Lock()
	var out []session.ContractVersion
	for _, cv := range v.byID {
		if tool == "" || cv.Tool == tool {
			out = append(out, cv)
		}
	}
	v.mu.Unlock()
	st.mu.Lock()
	for _, s := range st.sessions {
		if s.Status != session.Active {
			continue
		}
		for i := range out {
			if out[i].Tool == s.Tool && out[i].Version == s.ContractVersion {
				out[i].Active++
			}
		}
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b session.ContractVersion) int {
		if c := strings.Compare(a.Tool, b.Tool); c != 0 {
			return c
		}
		return a.FirstSeen.Compare(b.FirstSeen)
	})
	return out, nil
}

// ForgetVersion removes a version, as a purge of contract_versions would.
func (st *Store) ForgetVersion(tool, version string) {
	v := st.versions()
	v.mu.Lock()
	delete(v.byID, tool+" "+version)
	v.mu.Unlock()
}
