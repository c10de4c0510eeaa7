package console

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/contract/provider"
	"github.com/slotd/slotd/internal/api"
	"github.com/slotd/slotd/internal/session"
)

// DefaultPageSize is the sessions a page lists unless configured.
const DefaultPageSize = 50

// bar is one bar of a chart, its geometry worked out here: the CSP allows
// no inline style, and SVG attributes need none.
type bar struct {
	Label  string
	Value  float64
	X, Y   int
	Width  int
	Height int
}

type overviewData struct {
	Turns     float64
	PerMinute []bar
	PerHour   []bar
	Tools     []toolRow
	// Expiring is the active sessions whose ttl ends within expiringWithin.
	Expiring     int
	ExpiringMore bool
	ExpiringIn   string
	Actions      []bar
	// ToolActions are the turns by tool and action: the action chart's
	// figures in a table.
	ToolActions []toolAction
	// ActionsHeight is the height of the action chart.
	ActionsHeight int
	P99           string
	P99Above      bool
	Stale         int
	StaleMore     bool
	StaleAfter    string
	StaleLink     string
}

const (
	chartWidth  = 600
	chartHeight = 120
)

func (c *Console) overview(w http.ResponseWriter, r *http.Request, p *page) {
	d := overviewData{StaleAfter: c.cfg.StaleAfter.String()}
	acts := c.turns.actions()
	top := 1.0
	for _, a := range acts {
		d.Turns += a.value
		top = max(top, a.value)
	}
	for i, a := range acts {
		d.Actions = append(d.Actions, bar{Label: a.label, Value: a.value, X: 120, Y: i * 24,
			Width: int(a.value / top * (chartWidth - 200)), Height: 18})
	}
	d.ActionsHeight = len(acts) * 24
	d.ToolActions = c.turns.toolActions()
	mins, hours := c.turns.perMinute(), c.turns.perHour()
	if cur, ok := c.turns.sofar(c.cfg.Clock()); ok {
		mins, hours = withSofar(mins, hours, cur)
	}
	top = 1
	for _, m := range mins {
		top = max(top, m.turns)
	}
	step := chartWidth / window
	for i, m := range mins {
		h := int(m.turns / top * chartHeight)
		d.PerMinute = append(d.PerMinute, bar{Label: m.at.UTC().Format("15:04"), Value: m.turns,
			X: i * step, Y: chartHeight - h, Width: step - 1, Height: h})
	}
	top = 1
	for _, h := range hours {
		top = max(top, h.turns)
	}
	hstep := chartWidth / 24
	for i, h := range hours {
		ht := int(h.turns / top * chartHeight)
		d.PerHour = append(d.PerHour, bar{Label: h.at.UTC().Format("15:04"), Value: h.turns,
			X: i * hstep, Y: chartHeight - ht, Width: hstep - 2, Height: ht})
	}
	d.Tools, d.Expiring, d.ExpiringMore = c.toolRows(r, p)
	d.ExpiringIn = expiringWithin.String()
	if p99, above := c.turns.p99(); p99 > 0 {
		d.P99, d.P99Above = p99.String(), above
	}
	if c.cfg.StaleAfter > 0 {
		list, err := c.cfg.Admin.ListSessions(r.Context(), &slotdv1.ListSessionsRequest{
			Status: slotdv1.SessionStatus_SESSION_STATUS_ACTIVE, IdleLongerThan: durationpb.New(c.cfg.StaleAfter),
			PageSize: session.MaxLimit})
		if err != nil {
			p.Problem = c.failure(r.Context(), err)
		} else {
			d.Stale, d.StaleMore = len(list.GetSessions()), list.GetNextPageToken() != ""
		}
		d.StaleLink = Path + "sessions?" + url.Values{"status": {"active"}, "stale": {c.cfg.StaleAfter.String()}}.Encode()
	}
	p.Nav, p.Data = "overview", d
	c.render(w, r, http.StatusOK, "overview", p)
}

// expiringWithin is how soon a session's ttl must end for the overview to
// count it expiring (half the ttl when that is shorter).
const expiringWithin = time.Hour

// toolRow is a tool's line of the overview.
type toolRow struct {
	toolFigures
	// Expiring is its active sessions whose ttl ends within
	// expiringWithin, Link the list of them.
	Expiring int
	More     bool
	Link     string
}

// toolRows are the overview's lines per tool: the figures of the metrics
// and the sessions about to expire, by the tool's own ttl (the contract's
// or --ttl); and the sum of those.
func (c *Console) toolRows(r *http.Request, p *page) (rows []toolRow, expiring int, more bool) {
	figs := map[string]toolFigures{}
	for _, f := range c.turns.tools() {
		figs[f.Tool] = f
	}
	for _, ct := range c.cfg.Engine.Contracts().All() {
		f, ok := figs[ct.Name]
		if !ok {
			f = toolFigures{Tool: ct.Name, Validity: "—"}
		}
		row := toolRow{toolFigures: f}
		ttl := c.cfg.TTL
		if ct.TTL > 0 {
			ttl = ct.TTL
		}
		if idle := ttl - min(expiringWithin, ttl/2); ttl > 0 {
			list, err := c.cfg.Admin.ListSessions(r.Context(), &slotdv1.ListSessionsRequest{Tool: ct.Name,
				Status: slotdv1.SessionStatus_SESSION_STATUS_ACTIVE, IdleLongerThan: durationpb.New(idle), PageSize: session.MaxLimit})
			if err != nil {
				p.Problem = c.failure(r.Context(), err)
			} else {
				row.Expiring, row.More = len(list.GetSessions()), list.GetNextPageToken() != ""
				expiring += row.Expiring
				more = more || row.More
			}
			row.Link = Path + "sessions?" + url.Values{"status": {"active"}, "tool": {ct.Name}, "stale": {idle.String()}}.Encode()
		}
		rows = append(rows, row)
	}
	return rows, expiring, more
}

// filter is the sessions list's query.
type filter struct {
	Tenant, Tool, Status, Stale, Prefix, Page, Sort string
	// Size is the rows a page shows; the configured page size when "".
	Size string
}

func (f filter) query(page string) string {
	v := url.Values{}
	for k, s := range map[string]string{"tenant": f.Tenant, "tool": f.Tool, "status": f.Status, "stale": f.Stale,
		"prefix": f.Prefix, "sort": f.Sort, "size": f.Size, "page": page} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return Path + "sessions?" + v.Encode()
}

// Next is the link to the page after this one.
func (f filter) Next(token string) string { return f.query(token) }

// First is the link to the first page.
func (f filter) First() string { return f.query("") }

// Sorted is the link to this page sorted by last use the other way.
func (f filter) Sorted() string {
	g := f
	g.Sort = map[string]string{"": "oldest", "oldest": ""}[f.Sort]
	return g.query(f.Page)
}

type sessionRow struct {
	Tenant, ID, Conversation, Tool, Status string
	Version                                int64
	LastUse                                string
	Idle                                   string
	Missing                                []string
	// Sel is the row's checkbox value: the tenant, escaped, and the id.
	Sel   string
	Story string

	lastUse time.Time
}

type sessionsData struct {
	Filter   filter
	Rows     []sessionRow
	Next     string
	Statuses []string
	Tools    []string
}

// statusName is a session status as the console writes it: "active".
func statusName(s slotdv1.SessionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "SESSION_STATUS_"))
}

func (c *Console) sessions(w http.ResponseWriter, r *http.Request, p *page) {
	q := r.URL.Query()
	f := filter{Tenant: q.Get("tenant"), Tool: q.Get("tool"), Status: q.Get("status"), Stale: q.Get("stale"),
		Prefix: q.Get("prefix"), Page: q.Get("page"), Sort: q.Get("sort"), Size: q.Get("size")}
	d := sessionsData{Filter: f, Tools: c.cfg.Engine.Contracts().Names()}
	for i := int32(1); i < int32(len(slotdv1.SessionStatus_name)); i++ {
		d.Statuses = append(d.Statuses, statusName(slotdv1.SessionStatus(i)))
	}
	req := &slotdv1.ListSessionsRequest{Tenant: f.Tenant, Tool: f.Tool, ConversationPrefix: f.Prefix,
		PageSize: int32(c.cfg.PageSize), PageToken: f.Page}
	p.Nav, p.Data = "sessions", &d
	if f.Status != "" {
		v, ok := slotdv1.SessionStatus_value["SESSION_STATUS_"+strings.ToUpper(f.Status)]
		if !ok || v == 0 {
			p.Error = "console.bad_status"
			c.render(w, r, http.StatusBadRequest, "sessions", p)
			return
		}
		req.Status = slotdv1.SessionStatus(v)
	}
	if f.Size != "" {
		n, err := strconv.Atoi(f.Size)
		if err != nil || n < 1 || n > session.MaxLimit {
			p.Error = "console.bad_size"
			c.render(w, r, http.StatusBadRequest, "sessions", p)
			return
		}
		req.PageSize = int32(n)
	}
	if f.Stale != "" {
		dur, err := time.ParseDuration(f.Stale)
		if err != nil || dur <= 0 {
			p.Error = "console.bad_stale"
			c.render(w, r, http.StatusBadRequest, "sessions", p)
			return
		}
		req.IdleLongerThan = durationpb.New(dur)
	}
	now := c.cfg.Clock()
	list, err := c.cfg.Admin.ListSessions(r.Context(), req)
	if err != nil {
		p.Problem = c.failure(r.Context(), err)
		c.render(w, r, http.StatusBadRequest, "sessions", p)
		return
	}
	for _, s := range list.GetSessions() {
		ss := s.GetSession()
		last := ss.GetUpdatedAt().AsTime()
		d.Rows = append(d.Rows, sessionRow{Tenant: s.GetTenant(), ID: ss.GetId(), Conversation: ss.GetConversationId(),
			Tool: ss.GetTool(), Status: statusName(ss.GetStatus()), Version: ss.GetVersion(),
			LastUse: last.UTC().Format(time.DateTime), Idle: now.Sub(last).Truncate(time.Second).String(),
			Missing: ss.GetMissing(), Sel: url.PathEscape(s.GetTenant()) + "/" + ss.GetId(),
			Story: Path + "story?" + url.Values{"tenant": {s.GetTenant()}, "session": {ss.GetId()}}.Encode(), lastUse: last})
	}
	d.Next = list.GetNextPageToken()
	slices.SortFunc(d.Rows, func(a, b sessionRow) int {
		if f.Sort == "oldest" {
			return cmp.Or(a.lastUse.Compare(b.lastUse), cmp.Compare(a.ID, b.ID))
		}
		return cmp.Or(b.lastUse.Compare(a.lastUse), cmp.Compare(b.ID, a.ID))
	})
	c.render(w, r, http.StatusOK, "sessions", p)
}

// picked is a session chosen in the list.
type picked struct{ Tenant, ID, Sel string }

type confirmData struct {
	Picked  []picked
	Tenants []string
	Back    string
}

type doneData struct {
	Reset    int
	Failures []string
	Back     string
}

// reset resets the chosen sessions, after a page that names how many and
// of which tenants: the first POST shows it, the second (confirm=yes)
// resets, each through AdminService.ResetSession.
func (c *Console) reset(w http.ResponseWriter, r *http.Request, p *page) {
	var d confirmData
	back := r.PostFormValue("back")
	if !strings.HasPrefix(back, Path+"sessions") {
		back = Path + "sessions"
	}
	d.Back = back
	sels := r.PostForm["sel"]
	if len(sels) > session.MaxLimit {
		p.Error = "console.too_many"
		c.render(w, r, http.StatusBadRequest, "error", p)
		return
	}
	tenants := map[string]bool{}
	for _, sel := range sels {
		i := strings.LastIndexByte(sel, '/')
		if i < 0 {
			continue
		}
		tenant, err := url.PathUnescape(sel[:i])
		if err != nil {
			continue
		}
		d.Picked = append(d.Picked, picked{Tenant: tenant, ID: sel[i+1:], Sel: sel})
		tenants[tenant] = true
	}
	if len(d.Picked) == 0 {
		p.Error = "console.none_picked"
		c.render(w, r, http.StatusBadRequest, "error", p)
		return
	}
	for t := range tenants {
		d.Tenants = append(d.Tenants, t)
	}
	slices.Sort(d.Tenants)
	if r.PostFormValue("confirm") != "yes" {
		p.Nav, p.Data = "sessions", d
		c.render(w, r, http.StatusOK, "confirm", p)
		return
	}
	done := doneData{Back: back}
	for _, s := range d.Picked {
		if _, err := c.cfg.Admin.ResetSession(r.Context(), s.Tenant, s.ID); err != nil {
			done.Failures = append(done.Failures, s.ID+": "+c.failure(r.Context(), err))
			continue
		}
		done.Reset++
	}
	p.Nav, p.Data = "sessions", done
	c.render(w, r, http.StatusOK, "done", p)
}

// change is one slot change of a story.
type change struct {
	Slot, Decision, Old, New, At, TurnID string
	Version                              int64
}

// step is one turn of a story, or the changes made outside a turn (a
// reset, an expiry) at one version.
type step struct {
	TurnID  string
	Version int64
	At      string
	Action  string
	Request string
	Changes []change
	// Replays is how often the turn_id came again, ReplayedAt when the
	// last of those came, oldest first.
	Replays    int
	ReplayedAt []string
	// What the turn answered: the question asked and its allowed
	// values, the problem, the idempotency key, the notice, whether it
	// resumed a parked session, and the tools parked meanwhile.
	Question, Problem, Key, Notice string
	Allowed, Parked                []string
	Resumed                        bool
}

// LastReplay is when the turn_id last came again; "" when it never did.
func (s step) LastReplay() string {
	if len(s.ReplayedAt) == 0 {
		return ""
	}
	return s.ReplayedAt[len(s.ReplayedAt)-1]
}

// slotStory is why a slot has its value: the value and every change.
type slotStory struct {
	Name, Value string
	Changes     []change
}

type storyData struct {
	// Sel is the session's value for the reset form.
	Sel                                    string
	Tenant, ID, Conversation, Tool, Status string
	Version                                int64
	Missing                                []string
	Steps                                  []step
	Slots                                  []slotStory
	// Others are the conversation's other open sessions, one per tool.
	Others []otherSession
}

type otherSession struct{ Tool, ID, Link string }

// text is a value as the admin API sends it, in JSON; "—" for none.
func text(v *structpb.Value) string {
	if v == nil {
		return "—"
	}
	b, err := protojson.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func (c *Console) story(w http.ResponseWriter, r *http.Request, p *page) {
	q := r.URL.Query()
	req := &slotdv1.GetSessionHistoryRequest{Tenant: q.Get("tenant"), ConversationId: q.Get("conversation"),
		SessionId: q.Get("session"), Tool: q.Get("tool")}
	p.Nav = "sessions"
	if req.ConversationId == "" && req.SessionId == "" {
		p.Error = "console.story.which"
		c.render(w, r, http.StatusBadRequest, "error", p)
		return
	}
	d, err := buildStory(r, c.cfg.Admin, req)
	if err != nil {
		p.Problem = c.failure(r.Context(), err)
		c.render(w, r, http.StatusNotFound, "error", p)
		return
	}
	d.Others = c.others(r, req.Tenant, d.Conversation, d.ID)
	p.Data = d
	c.render(w, r, http.StatusOK, "story", p)
}

// buildStory is the story of the session req names, read through admin.
func buildStory(r *http.Request, admin *api.AdminService, req *slotdv1.GetSessionHistoryRequest) (storyData, error) {
	h, err := admin.GetSessionHistory(r.Context(), req)
	if err != nil {
		return storyData{}, err
	}
	s := h.GetSession()
	d := storyData{Sel: url.PathEscape(req.Tenant) + "/" + s.GetId(), Tenant: req.Tenant, ID: s.GetId(), Conversation: s.GetConversationId(), Tool: s.GetTool(),
		Status: statusName(s.GetStatus()), Version: s.GetVersion(), Missing: s.GetMissing()}
	byTurn := map[string]int{}
	for _, t := range h.GetTurns() {
		req := "{}"
		if b, err := protojson.Marshal(t.GetRequest()); err == nil && t.GetRequest() != nil {
			req = string(b)
		}
		byTurn[t.GetTurnId()] = len(d.Steps)
		st := step{TurnID: t.GetTurnId(), Version: t.GetVersion(), At: t.GetAt().AsTime().UTC().Format(time.DateTime),
			Action: strings.ToLower(strings.TrimPrefix(t.GetAction().String(), "ACTION_")), Request: req, Replays: int(t.GetReplays())}
		for _, at := range t.GetReplayedAt() {
			st.ReplayedAt = append(st.ReplayedAt, at.AsTime().UTC().Format(time.DateTime))
		}
		if a := t.GetAnswer(); a != nil {
			st.Question, st.Allowed = a.GetQuestion().GetText(), a.GetQuestion().GetAllowedValues()
			if pr := a.GetProblem(); pr != nil {
				st.Problem = strings.TrimSuffix(pr.GetTitle()+": "+pr.GetDetail(), ": ")
			}
			st.Key, st.Notice, st.Resumed = a.GetIdempotencyKey(), a.GetNotice(), a.GetResumed()
			for _, o := range a.GetOpenSessions() {
				st.Parked = append(st.Parked, o.GetTool())
			}
		}
		d.Steps = append(d.Steps, st)
	}
	slots := map[string]*slotStory{}
	var names []string
	for _, ch := range h.GetChanges() {
		c := change{Slot: ch.GetSlot(), Decision: strings.ToLower(strings.TrimPrefix(ch.GetDecision().String(), "DECISION_")),
			Old: text(ch.GetOld()), New: text(ch.GetNew()), At: ch.GetAt().AsTime().UTC().Format(time.DateTime),
			TurnID: ch.GetTurnId(), Version: ch.GetVersion()}
		key := c.TurnID
		if key == "" {
			// Outside a turn: one step per version.
			key = fmt.Sprint("version ", c.Version)
		}
		i, ok := byTurn[key]
		if !ok {
			i = len(d.Steps)
			byTurn[key] = i
			d.Steps = append(d.Steps, step{TurnID: c.TurnID, Version: c.Version, At: c.At})
		}
		d.Steps[i].Changes = append(d.Steps[i].Changes, c)
		if slots[c.Slot] == nil {
			slots[c.Slot] = &slotStory{Name: c.Slot, Value: "—"}
			names = append(names, c.Slot)
		}
		slots[c.Slot].Changes = append(slots[c.Slot].Changes, c)
	}
	for name, v := range s.GetSlots().GetFields() {
		if slots[name] == nil {
			slots[name] = &slotStory{Name: name}
			names = append(names, name)
		}
		slots[name].Value = text(v)
	}
	slices.SortStableFunc(d.Steps, func(a, b step) int { return cmp.Compare(a.Version, b.Version) })
	for _, n := range names {
		d.Slots = append(d.Slots, *slots[n])
	}
	return d, nil
}

// others are the conversation's open sessions of each tool but the one
// shown, looked up as GetSessionHistory looks sessions up. Ended sessions
// other than the latest are not found this way: no admin call lists a
// conversation's sessions.
func (c *Console) others(r *http.Request, tenant, conv, shown string) []otherSession {
	var out []otherSession
	for _, tool := range c.cfg.Engine.Contracts().Names() {
		s, err := c.cfg.Engine.Find(r.Context(), session.Lookup{Tenant: tenant, ConversationID: conv, Tool: tool}, tenant == "")
		if err != nil || s.ID == shown {
			continue
		}
		out = append(out, otherSession{Tool: tool, ID: s.ID,
			Link: Path + "story?" + url.Values{"tenant": {s.Key.Tenant}, "session": {s.ID}}.Encode()})
	}
	return out
}

type erasedData struct {
	Found    bool
	Sessions int32
	Hash, By string
}

// erase erases a conversation through AdminService.EraseConversation,
// which records it under the admin key's name. The conversation id must
// be typed again: a slip of the mouse erases nothing.
func (c *Console) erase(w http.ResponseWriter, r *http.Request, p *page) {
	tenant, conv := r.PostFormValue("tenant"), r.PostFormValue("conversation")
	p.Nav = "sessions"
	if conv == "" || r.PostFormValue("typed") != conv {
		p.Error = "console.erase.mismatch"
		c.render(w, r, http.StatusBadRequest, "error", p)
		return
	}
	got, err := c.cfg.Admin.EraseConversation(r.Context(), &slotdv1.EraseConversationRequest{Tenant: tenant, ConversationId: conv})
	if err != nil {
		p.Problem = c.failure(r.Context(), err)
		c.render(w, r, http.StatusBadRequest, "error", p)
		return
	}
	p.Data = erasedData{Found: got.GetFound(), Sessions: got.GetSessionsErased(), Hash: got.GetConversationHash(), By: got.GetErasedBy()}
	c.render(w, r, http.StatusOK, "erased", p)
}

type propertyRow struct {
	Name, Type, Format, Enum, Normalize string
	Required, Irreversible, Sensitive   bool
	// Texts are the slot's label and question in each language.
	Texts []slotText
}

// slotText is how a slot is named and asked for in one language; From is
// the language the question came from when the contract lacks this one.
type slotText struct{ Lang, Label, Ask, From string }

type contractRow struct {
	Name, Version, Description string
	// Play is the playground with the tool picked.
	Play       string
	Confirm    bool
	Properties []propertyRow
	Costs      []costRow
	Findings   []provider.Finding
}

type contractsData struct {
	Contracts []contractRow
	// Total is what every tool together costs per provider.
	Total []costRow
	// Set are the findings about the contracts together.
	Set []provider.Finding
	// Failed says lint or the sizes could not be worked out.
	Failed string
}

// slotTexts are pr's label and question in English, Russian and Ukrainian.
func slotTexts(pr *contract.Property) []slotText {
	var out []slotText
	for _, l := range []string{"en", "ru", "uk"} {
		ask, found := pr.AskIn(l, "")
		st := slotText{Lang: l, Label: pr.Label(l, ""), Ask: ask}
		if ask != "" && found != l {
			st.From = found
		}
		out = append(out, st)
	}
	return out
}

func (c *Console) contracts(w http.ResponseWriter, r *http.Request, p *page) {
	var d contractsData
	all := c.cfg.Engine.Contracts().All()
	checks := check(all)
	if checks.err != nil {
		d.Failed = checks.err.Error()
	}
	d.Total, d.Set = checks.costs["*"], checks.set
	for _, ct := range all {
		row := contractRow{Name: ct.Name, Version: ct.Version, Description: ct.Description, Confirm: ct.Confirm,
			Play:  Path + "playground?" + url.Values{"tool": {ct.Name}}.Encode(),
			Costs: checks.costs[ct.Name], Findings: checks.findings[ct.Name]}
		for _, pr := range ct.Properties {
			row.Properties = append(row.Properties, propertyRow{Name: pr.Name, Type: pr.Type, Format: pr.Format,
				Enum: strings.Join(pr.Enum, ", "), Normalize: strings.Join(pr.Normalize, ", "),
				Required: slices.Contains(ct.Required, pr.Name), Irreversible: pr.Irreversible, Sensitive: pr.Sensitive,
				Texts: slotTexts(pr)})
		}
		d.Contracts = append(d.Contracts, row)
	}
	p.Nav, p.Data = "contracts", d
	c.render(w, r, http.StatusOK, "contracts", p)
}
