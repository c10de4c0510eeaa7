package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/clarify"
	"github.com/slotd/slotd/internal/merge"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/problem"
)

// A replay plays the stored turns of real conversations through the
// planner twice, in memory, writing nothing: once with the contract
// versions the turns ran on (the baseline) and once with a candidate
// catalog (the next version), and compares the two turn by turn. Both
// plays get the same input, the arguments as the history keeps them, so
// that the contract is the one thing that differs: a value the history
// masked (a sensitive slot, a card number cut to its last four digits)
// counts as absent in both, and is reported.

// StoredTurn is a turn as the history keeps it, as a replay reads it.
type StoredTurn struct {
	TurnID    string
	SessionID string
	Tool      string
	// Action is the action the turn answered with.
	Action string
	// Request is the turn's request as the history keeps it (masked).
	Request []byte
	At      time.Time
	// ContractVersion is the version the turn ran on; "" for turns stored
	// before versions were kept.
	ContractVersion string
}

// StoredConversation is a conversation's stored turns, in the order they
// were taken.
type StoredConversation struct {
	Key   Key
	Turns []StoredTurn
	// Bare are the conversation's sessions that have no stored turn: their
	// turns were purged.
	Bare []string
}

// ReplayFilter picks the conversations a replay plays.
type ReplayFilter struct {
	// Tool: only conversations with a session of this tool ("" for all).
	Tool string
	// Since: only conversations with a session used at or after it (zero
	// for all).
	Since time.Time
	// Limit is how many conversations at most, the most recently used
	// first.
	Limit int
}

// ReplaySource reads the stored turns a replay plays. pgstore and
// memstore implement it.
type ReplaySource interface {
	// ReplayKeys lists the conversations f picks, the most recently used
	// first, at most f.Limit.
	ReplayKeys(ctx context.Context, f ReplayFilter) ([]Key, error)
	// TurnsOf reads the stored turns of the conversations keys, in the
	// order of keys; a conversation with no session left is left out.
	TurnsOf(ctx context.Context, keys []Key) ([]StoredConversation, error)
}

// DefaultReplayLimit is how many conversations a replay plays when its
// filter names no limit.
const DefaultReplayLimit = 1000

// replayBatch is how many conversations a replay reads at once.
const replayBatch = 500

// Why a conversation is not replayed.
const (
	NotReplayedPurged         = "purged"          // a session's turns are gone
	NotReplayedVersionGone    = "version-gone"    // a version a turn ran on is no longer stored
	NotReplayedVersionUnknown = "version-unknown" // a turn stored before versions were kept
	NotReplayedUnreadable     = "unreadable"      // a stored request does not parse
)

// ReplayStep is what one play of a turn answered.
type ReplayStep struct {
	Action         string         `json:"action"`
	QuestionSlot   string         `json:"question_slot,omitempty"`
	Question       string         `json:"question,omitempty"`
	Arguments      map[string]any `json:"arguments,omitempty"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	// Refused are the slots whose values the turn refused.
	Refused []string `json:"refused,omitempty"`
	// Error is the problem's title when the turn was refused as a whole
	// (an unknown tool, a session too long).
	Error string `json:"error,omitempty"`
}

// TurnDiff is a turn whose two plays differ: in Fields (action, question,
// arguments, idempotency_key).
type TurnDiff struct {
	// Turn counts the conversation's turns from 1.
	Turn   int        `json:"turn"`
	TurnID string     `json:"turn_id"`
	Tool   string     `json:"tool"`
	Fields []string   `json:"fields"`
	Before ReplayStep `json:"before"`
	After  ReplayStep `json:"after"`
}

// What became of a conversation's READY with the candidate.
const (
	ReadySame    = "same"    // READY at the same turn, or in neither play
	ReadyEarlier = "earlier" // READY at an earlier turn, or only with the candidate
	ReadyLater   = "later"   // READY at a later turn
	ReadyLost    = "lost"    // READY with the baseline, never with the candidate
)

// ConversationReplay is one conversation's replay.
type ConversationReplay struct {
	Tenant         string   `json:"tenant,omitempty"`
	ConversationID string   `json:"conversation_id"`
	Tools          []string `json:"tools"`
	Turns          int      `json:"turns"`
	// NotReplayed says why the conversation was not replayed (the
	// NotReplayed constants), Detail what exactly; empty when it was.
	NotReplayed string `json:"not_replayed,omitempty"`
	Detail      string `json:"detail,omitempty"`
	// Masked are the slots whose stored values were masked and so played
	// as absent.
	Masked []string `json:"masked,omitempty"`
	// ReadyBefore and ReadyAfter are the turn (from 1) of the first READY
	// of each play, 0 when none; Ready compares them.
	ReadyBefore int    `json:"ready_before,omitempty"`
	ReadyAfter  int    `json:"ready_after,omitempty"`
	Ready       string `json:"ready,omitempty"`
	// ReadyArguments: both plays reach READY with other arguments.
	ReadyArguments bool `json:"ready_arguments_differ,omitempty"`
	// NewlyAsked are slots the candidate asks for and the baseline never
	// did; NewlyRefused slots whose values it refuses and the baseline
	// did not.
	NewlyAsked   []string   `json:"newly_asked,omitempty"`
	NewlyRefused []string   `json:"newly_refused,omitempty"`
	Diffs        []TurnDiff `json:"diffs,omitempty"`
}

// Differs reports whether any turn of the conversation plays otherwise.
func (c *ConversationReplay) Differs() bool { return len(c.Diffs) > 0 }

// ReplaySummary counts a replay's conversations.
type ReplaySummary struct {
	Conversations int `json:"conversations"`
	Replayed      int `json:"replayed"`
	Same          int `json:"same"`
	Differ        int `json:"differ"`
	ReadyEarlier  int `json:"ready_earlier"`
	ReadyLater    int `json:"ready_later"`
	ReadyLost     int `json:"ready_lost"`
	ReadyArgs     int `json:"ready_arguments_differ"`
	NewlyAsked    int `json:"newly_asked"`
	NewlyRefused  int `json:"newly_refused"`
	Masked        int `json:"masked"`
	NotReplayed   int `json:"not_replayed"`
	// AskedSlots and RefusedSlots count, per slot, the conversations in
	// which it is newly asked or newly refused.
	AskedSlots   map[string]int `json:"newly_asked_slots,omitempty"`
	RefusedSlots map[string]int `json:"newly_refused_slots,omitempty"`
	// NotReplayedWhy counts the conversations not replayed by reason.
	NotReplayedWhy map[string]int `json:"not_replayed_why,omitempty"`
}

// ReplayReport is a replay's result: each conversation, and the summary.
type ReplayReport struct {
	Summary       ReplaySummary        `json:"summary"`
	Conversations []ConversationReplay `json:"conversations"`
}

// The conditions a replay can be made to fail on (--fail-on).
var FailConditions = []string{"any", "differ", "ready-lost", "ready-later", "ready-args",
	"newly-asked", "newly-refused", "not-replayed"}

// ParseFailOn reads a comma-separated list of FailConditions.
func ParseFailOn(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if !slices.Contains(FailConditions, f) {
			return nil, fmt.Errorf("unknown condition %q (have: %s)", f, strings.Join(FailConditions, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Holding is which of conds hold for the report, in the order given.
func (r *ReplayReport) Holding(conds []string) []string {
	s := r.Summary
	holds := map[string]bool{
		"differ":        s.Differ > 0,
		"ready-lost":    s.ReadyLost > 0,
		"ready-later":   s.ReadyLater > 0,
		"ready-args":    s.ReadyArgs > 0,
		"newly-asked":   s.NewlyAsked > 0,
		"newly-refused": s.NewlyRefused > 0,
		"not-replayed":  s.NotReplayed > 0,
	}
	holds["any"] = s.Differ > 0 || s.NotReplayed > 0
	var out []string
	for _, c := range conds {
		if holds[c] {
			out = append(out, c)
		}
	}
	return out
}

// Replayer plays stored conversations with the versions their turns ran
// on and with a candidate catalog.
type Replayer struct {
	next     *contract.Catalog
	versions VersionStore
	config   Config
	// parsed are the stored versions read so far, by tool and version;
	// gone those the store does not hold.
	parsed  map[string]*contract.Contract
	gone    map[string]bool
	catalog map[string]*contract.Catalog
	zones   map[string]*time.Location
}

// NewReplayer plays conversations with next as the candidate and the
// versions versions holds as the baseline, with cfg's lifetimes and caps.
func NewReplayer(next *contract.Catalog, versions VersionStore, cfg Config) *Replayer {
	return &Replayer{next: next, versions: versions, config: cfg.WithDefaults(),
		parsed: map[string]*contract.Contract{}, gone: map[string]bool{},
		catalog: map[string]*contract.Catalog{}, zones: map[string]*time.Location{}}
}

// Run replays the conversations f picks from src.
func (r *Replayer) Run(ctx context.Context, src ReplaySource, f ReplayFilter) (*ReplayReport, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultReplayLimit
	}
	keys, err := src.ReplayKeys(ctx, f)
	if err != nil {
		return nil, err
	}
	rep := &ReplayReport{Conversations: make([]ConversationReplay, 0, len(keys))}
	for len(keys) > 0 {
		batch := keys[:min(replayBatch, len(keys))]
		keys = keys[len(batch):]
		convs, err := src.TurnsOf(ctx, batch)
		if err != nil {
			return nil, err
		}
		for i := range convs {
			cr, err := r.Conversation(ctx, &convs[i])
			if err != nil {
				return nil, err
			}
			rep.add(cr)
		}
	}
	return rep, nil
}

func (rep *ReplayReport) add(c ConversationReplay) {
	s := &rep.Summary
	s.Conversations++
	if len(c.Masked) > 0 {
		s.Masked++
	}
	if c.NotReplayed != "" {
		s.NotReplayed++
		if s.NotReplayedWhy == nil {
			s.NotReplayedWhy = map[string]int{}
		}
		s.NotReplayedWhy[c.NotReplayed]++
		rep.Conversations = append(rep.Conversations, c)
		return
	}
	s.Replayed++
	if c.Differs() {
		s.Differ++
	} else {
		s.Same++
	}
	switch c.Ready {
	case ReadyEarlier:
		s.ReadyEarlier++
	case ReadyLater:
		s.ReadyLater++
	case ReadyLost:
		s.ReadyLost++
	}
	if c.ReadyArguments {
		s.ReadyArgs++
	}
	count := func(n *int, m *map[string]int, slots []string) {
		if len(slots) == 0 {
			return
		}
		*n++
		if *m == nil {
			*m = map[string]int{}
		}
		for _, sl := range slots {
			(*m)[sl]++
		}
	}
	count(&s.NewlyAsked, &s.AskedSlots, c.NewlyAsked)
	count(&s.NewlyRefused, &s.RefusedSlots, c.NewlyRefused)
	rep.Conversations = append(rep.Conversations, c)
}

// Conversation replays one stored conversation. Its error is the store's
// (a version that cannot be read); a conversation that cannot be replayed
// says why in its NotReplayed.
func (r *Replayer) Conversation(ctx context.Context, sc *StoredConversation) (ConversationReplay, error) {
	out := ConversationReplay{Tenant: sc.Key.Tenant, ConversationID: sc.Key.ConversationID, Turns: len(sc.Turns), Tools: []string{}}
	for _, t := range sc.Turns {
		if !slices.Contains(out.Tools, t.Tool) {
			out.Tools = append(out.Tools, t.Tool)
		}
	}
	notReplayed := func(why, detail string) (ConversationReplay, error) {
		out.NotReplayed, out.Detail = why, detail
		return out, nil
	}
	if len(sc.Bare) > 0 {
		return notReplayed(NotReplayedPurged, fmt.Sprintf("%d of its sessions have no stored turns", len(sc.Bare)))
	}
	if len(sc.Turns) == 0 {
		return notReplayed(NotReplayedPurged, "no stored turns")
	}
	// The turns as requests, masked values taken out; the baseline's
	// contract of each turn.
	reqs := make([]TurnRequest, len(sc.Turns))
	before := make([]*contract.Contract, len(sc.Turns))
	masked := map[string]bool{}
	latest := map[string]*contract.Contract{}
	for i, t := range sc.Turns {
		if err := json.Unmarshal(t.Request, &reqs[i]); err != nil || reqs[i].Tool != t.Tool {
			return notReplayed(NotReplayedUnreadable, fmt.Sprintf("turn %d's stored request cannot be read", i+1))
		}
		reqs[i].Tenant, reqs[i].ConversationID, reqs[i].TurnID = sc.Key.Tenant, sc.Key.ConversationID, t.TurnID
		if reqs[i].Now.IsZero() {
			reqs[i].Now = t.At
		}
		reqs[i].Now = reqs[i].Now.UTC()
		reqs[i].Arguments = unmasked(reqs[i].Arguments, masked)
		if t.ContractVersion == "" {
			return notReplayed(NotReplayedVersionUnknown, fmt.Sprintf("turn %d was stored before contract versions were kept", i+1))
		}
		c, err := r.version(ctx, t.Tool, t.ContractVersion)
		if errors.Is(err, ErrNotFound) {
			return notReplayed(NotReplayedVersionGone, fmt.Sprintf("%s version %s is no longer stored", t.Tool, t.ContractVersion))
		}
		if err != nil {
			return out, err
		}
		before[i] = c
		latest[t.Tool] = c
	}
	out.Masked = slices.Sorted(maps.Keys(masked))
	baseCat, err := r.catalogOf(latest)
	if err != nil {
		return out, err
	}
	ids := sessionIDs(sc)
	a := r.play(reqs, func(i int) (*contract.Contract, *contract.Catalog) { return before[i], baseCat }, ids, true)
	b := r.play(reqs, func(i int) (*contract.Contract, *contract.Catalog) { return r.next.Get(reqs[i].Tool), r.next }, ids, false)
	compare(&out, sc, a, b)
	return out, nil
}

// version is a stored contract version, read once per replayer.
func (r *Replayer) version(ctx context.Context, tool, version string) (*contract.Contract, error) {
	k := tool + " " + version
	if c := r.parsed[k]; c != nil {
		return c, nil
	}
	if r.gone[k] {
		return nil, ErrNotFound
	}
	if c := r.next.Get(tool); c != nil && c.Version == version {
		r.parsed[k] = c
		return c, nil
	}
	if r.versions == nil {
		r.gone[k] = true
		return nil, ErrNotFound
	}
	cv, err := r.versions.ContractVersion(ctx, tool, version)
	if errors.Is(err, ErrNotFound) {
		r.gone[k] = true
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	c, err := contract.Parse(tool+"@"+version, cv.Document)
	if err != nil {
		return nil, fmt.Errorf("session: stored contract %s version %s: %w", tool, version, err)
	}
	r.parsed[k] = c
	return c, nil
}

// catalogOf is a catalog of cs, built once per set of versions.
func (r *Replayer) catalogOf(cs map[string]*contract.Contract) (*contract.Catalog, error) {
	names := slices.Sorted(maps.Keys(cs))
	var k strings.Builder
	for _, n := range names {
		k.WriteString(n + "@" + cs[n].Version + " ")
	}
	if cat := r.catalog[k.String()]; cat != nil {
		return cat, nil
	}
	list := make([]*contract.Contract, 0, len(names))
	for _, n := range names {
		list = append(list, cs[n])
	}
	cat, err := contract.NewCatalog(list...)
	if err != nil {
		return nil, err
	}
	r.catalog[k.String()] = cat
	return cat, nil
}

// sessionIDs are the ids a play draws for the sessions it opens: the
// stored sessions' ids in the order they were opened, then ids made from
// the conversation's key, so that both plays name their sessions alike
// and an idempotency key differs only when the arguments do.
func sessionIDs(sc *StoredConversation) []string {
	var ids []string
	for _, t := range sc.Turns {
		if !slices.Contains(ids, t.SessionID) {
			ids = append(ids, t.SessionID)
		}
	}
	return ids
}

// drawIDs draws from ids, then ids made from key.
func drawIDs(key Key, ids []string) func() string {
	n := 0
	return func() string {
		n++
		if n <= len(ids) && CanonicalID(ids[n-1]) {
			return ids[n-1]
		}
		for k := 0; ; k++ {
			id := uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "slotd-replay:%s:%s:%d:%d", key.Tenant, key.ConversationID, n, k)).String()
			if redact.String(id) == id {
				return id
			}
		}
	}
}

// play runs reqs through the planner, each with the contract and catalog
// of, on sessions kept in memory. With migrate, a session whose version
// differs from its turn's contract moves to it, as it did when the turn
// was taken.
func (r *Replayer) play(reqs []TurnRequest, of func(int) (*contract.Contract, *contract.Catalog), ids []string, migrate bool) []ReplayStep {
	steps := make([]ReplayStep, len(reqs))
	sessions := map[string]*Session{}
	newID := drawIDs(Key{reqs[0].Tenant, reqs[0].ConversationID}, ids)
	for i, req := range reqs {
		c, cat := of(i)
		if c == nil {
			steps[i] = ReplayStep{Error: problem.UnknownTool(req.Tool, cat.Names()).Error()}
			continue
		}
		var open []*Session
		var left *Session
		for _, s := range sessions {
			if s.Open {
				open = append(open, s.Clone())
			} else if left == nil || s.WrittenAfter(left) {
				left = s
			}
		}
		var up *upgrade
		if migrate {
			for _, s := range open {
				if s.Tool == c.Name && s.Status == Active && s.ContractVersion != "" && s.ContractVersion != c.Version {
					if old := r.parsed[c.Name+" "+s.ContractVersion]; old != nil {
						up = &upgrade{version: s.ContractVersion, contract: old, migrate: true}
					}
				}
			}
		}
		in := planInput{contract: c, contracts: cat, config: r.config, req: req, open: open,
			zones: r.zonesOf(req, open), newID: newID, upgrade: up}
		if left != nil {
			in.left = left.Use()
		}
		res, commit, err := plan(in)
		if err != nil {
			steps[i] = ReplayStep{Error: errorTitle(err)}
			continue
		}
		for _, s := range append(slices.Clone(commit.Ended), commit.Session) {
			if s != nil {
				sessions[s.ID] = s.Clone()
			}
		}
		steps[i] = stepOf(res)
	}
	return steps
}

func errorTitle(err error) string {
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe.Problem.Title
	}
	return err.Error()
}

func (r *Replayer) zonesOf(req TurnRequest, open []*Session) map[string]*time.Location {
	zones := make(map[string]*time.Location, len(open)+1)
	add := func(name string) {
		loc, ok := r.zones[name]
		if !ok {
			var err error
			if loc, err = time.LoadLocation(name); err != nil {
				loc = nil
			}
			r.zones[name] = loc
		}
		if loc != nil {
			zones[name] = loc
		}
	}
	add(req.TimeZone)
	for _, s := range open {
		add(s.TimeZone)
	}
	return zones
}

func stepOf(res *Result) ReplayStep {
	st := ReplayStep{Action: string(res.Action), IdempotencyKey: res.IdempotencyKey}
	if q := res.Question; q != nil {
		st.QuestionSlot, st.Question = q.Slot, q.Text
	}
	if res.Action == clarify.Ready || res.Action == clarify.Confirm {
		st.Arguments = res.Arguments
	}
	for _, ch := range res.Changes {
		if ch.Decision == merge.Rejected && !slices.Contains(st.Refused, ch.Slot) {
			st.Refused = append(st.Refused, ch.Slot)
		}
	}
	if res.Action == clarify.Repair && st.QuestionSlot != "" && !slices.Contains(st.Refused, st.QuestionSlot) {
		st.Refused = append(st.Refused, st.QuestionSlot)
	}
	return st
}

// unmasked is args without the values the history masked, whose names it
// adds to masked: a sensitive slot's value, and any value holding a card
// number cut to its last four digits.
func unmasked(args map[string]any, masked map[string]bool) map[string]any {
	var out map[string]any
	for k, v := range args {
		if isMasked(v, 0) {
			if out == nil {
				out = maps.Clone(args)
			}
			delete(out, k)
			masked[k] = true
		}
	}
	if out == nil {
		return args
	}
	return out
}

func isMasked(v any, depth int) bool {
	if depth > redact.MaxDepth {
		return false
	}
	switch t := v.(type) {
	case string:
		return t == clarify.Masked || strings.Contains(t, redact.Masked)
	case map[string]any:
		for k, x := range t {
			if strings.Contains(k, redact.Masked) || isMasked(x, depth+1) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if isMasked(x, depth+1) {
				return true
			}
		}
	}
	return false
}

// compare fills out with where the plays a (baseline) and b (candidate)
// differ.
func compare(out *ConversationReplay, sc *StoredConversation, a, b []ReplayStep) {
	asked := map[string]bool{}
	refused := map[string]bool{}
	for _, st := range a {
		if st.Action == string(clarify.Ask) && st.QuestionSlot != "" {
			asked[st.QuestionSlot] = true
		}
		for _, s := range st.Refused {
			refused[s] = true
		}
	}
	var readyA, readyB string
	for i := range a {
		x, y := a[i], b[i]
		var fields []string
		if x.Action != y.Action || x.Error != y.Error {
			fields = append(fields, "action")
		}
		if x.QuestionSlot != y.QuestionSlot || x.Question != y.Question {
			fields = append(fields, "question")
		}
		if !reflect.DeepEqual(x.Arguments, y.Arguments) {
			fields = append(fields, "arguments")
		}
		if x.IdempotencyKey != y.IdempotencyKey {
			fields = append(fields, "idempotency_key")
		}
		if len(fields) > 0 {
			out.Diffs = append(out.Diffs, TurnDiff{Turn: i + 1, TurnID: sc.Turns[i].TurnID, Tool: sc.Turns[i].Tool,
				Fields: fields, Before: x, After: y})
		}
		if x.Action == string(clarify.Ready) && out.ReadyBefore == 0 {
			out.ReadyBefore, readyA = i+1, argsKey(x.Arguments)
		}
		if y.Action == string(clarify.Ready) && out.ReadyAfter == 0 {
			out.ReadyAfter, readyB = i+1, argsKey(y.Arguments)
		}
		if y.Action == string(clarify.Ask) && y.QuestionSlot != "" && !asked[y.QuestionSlot] && !slices.Contains(out.NewlyAsked, y.QuestionSlot) {
			out.NewlyAsked = append(out.NewlyAsked, y.QuestionSlot)
		}
		for _, s := range y.Refused {
			if !refused[s] && !slices.Contains(out.NewlyRefused, s) {
				out.NewlyRefused = append(out.NewlyRefused, s)
			}
		}
	}
	sort.Strings(out.NewlyAsked)
	sort.Strings(out.NewlyRefused)
	switch ra, rb := out.ReadyBefore, out.ReadyAfter; {
	case ra == rb:
		out.Ready = ReadySame
	case rb == 0:
		out.Ready = ReadyLost
	case ra == 0 || rb < ra:
		out.Ready = ReadyEarlier
	default:
		out.Ready = ReadyLater
	}
	out.ReadyArguments = out.ReadyBefore > 0 && out.ReadyAfter > 0 && readyA != readyB
}

func argsKey(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// MaxReplayLimit bounds the conversations one ReplayContracts call plays.
const MaxReplayLimit = 10000

// UseReplaySource lets the engine replay the conversations src stores
// (ReplayContracts); the server sets it when its store is one.
func (e *Engine) UseReplaySource(src ReplaySource) { e.replay = src }

// ReplayContracts replays the conversations f picks with next as the
// candidate, the engine's lifetimes and caps, and the versions the
// engine's store holds as the baseline.
func (e *Engine) ReplayContracts(ctx context.Context, next *contract.Catalog, f ReplayFilter) (*ReplayReport, error) {
	if e.replay == nil {
		return nil, fmt.Errorf("%w: the store keeps no history to replay", ErrUnavailable)
	}
	var vs VersionStore
	if e.versions != nil {
		vs = e.versions.store
	}
	return NewReplayer(next, vs, e.defaults).Run(ctx, e.replay, f)
}
