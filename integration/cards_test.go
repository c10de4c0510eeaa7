package integration

import (
	"bytes"
	"context"

	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/dbtest"
	"github.com/slotd/slotd/internal/redact"
	"github.com/slotd/slotd/internal/server"
	"github.com/slotd/slotd/internal/servertest"
)

// No full card number is ever stored, returned or logged: card numbers are
// sent in every field and every form a model or an attacker uses, then
// every column of every slotd table, every response and every log line is
// searched for them.

// pans are Luhn-valid card numbers of several networks, with digits in the
// middle that nothing else slotd stores holds.
var pans = []string{"4276381965240172", "5519230487163053", "378294716590347", "6011749382650196", "3562748193056247"}

// cardForms writes a card number the ways people, models and attackers do.
func cardForms(pan string) []any {
	groups := func(sep string) string {
		if len(pan) == 15 { // Amex: 4-6-5
			return pan[:4] + sep + pan[4:10] + sep + pan[10:]
		}
		var parts []string
		for i := 0; i < len(pan); i += 4 {
			parts = append(parts, pan[i:min(i+4, len(pan))])
		}
		return strings.Join(parts, sep)
	}
	script := func(zero rune) string {
		return strings.Map(func(r rune) rune { return zero + r - '0' }, pan)
	}
	invisible := strings.Join(strings.Split(pan, ""), "\u200b")
	forms := []any{
		pan, groups(" "), groups("\u00a0"), groups("\u202f"), groups("."), groups("-"), groups("/"), groups(","), groups(" - "),
		invisible, script('٠'), script('۰'), script('०'), script('０'),
		"card " + groups(" ") + " exp 12/29", "карта " + groups("-") + ", срок 12/29, CVC 123",
		"оплата картой " + groups("\u00a0") + " вчера",
		map[string]any{"number": groups(" ")}, map[string]any{pan: "the key is the number"}, []any{"x", groups("-")},
	}
	if f, ok := jsonNumber(pan); ok {
		forms = append(forms, f)
	}
	return forms
}

func jsonNumber(pan string) (float64, bool) {
	var f float64
	if _, err := fmt.Sscanf(pan, "%f", &f); err != nil || fmt.Sprintf("%.0f", f) != pan {
		return 0, false
	}
	return f, true
}

// leaks lists what in text is, or gives away, one of the card numbers.
func leaks(text string) []string {
	var out []string
	if redact.HasCard(text) {
		out = append(out, "a card number")
	}
	for _, pan := range pans {
		for _, part := range []string{pan, pan[4:12], pan[:6] + "0" + pan[6:]} {
			if strings.Contains(text, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

type cardRig struct {
	inst *instance
	url  string
	logs *servertest.LogBuffer
	http string

	mu        sync.Mutex
	responses []string
}

func (r *cardRig) keep(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.responses = append(r.responses, s)
}

func (r *cardRig) turn(t *testing.T, ctx context.Context, req *slotdv1.TurnRequest) (*slotdv1.TurnResponse, error) {
	t.Helper()
	resp, err := r.inst.client.Turn(ctx, req)
	if err != nil {
		r.keep(err.Error())
		b, _ := protojson.Marshal(status.Convert(err).Proto())
		r.keep(string(b))
		return nil, err
	}
	b, _ := protojson.Marshal(resp)
	r.keep(string(b))
	return resp, nil
}

func (r *cardRig) post(t *testing.T, path string, header map[string]string, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.http+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bankKey)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	r.keep(b.String())
	for k, vs := range resp.Header {
		r.keep(k + ": " + strings.Join(vs, ","))
	}
	return resp.StatusCode
}

func TestNoCardNumberIsStoredReturnedOrLogged(t *testing.T) {
	t.Parallel()
	rig := &cardRig{url: dbtest.NewDatabase(t), logs: &servertest.LogBuffer{}}
	log := slog.New(slog.NewJSONHandler(rig.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := server.Config{Listen: "127.0.0.1:0", HTTPListen: "127.0.0.1:0", Contracts: contractsDir(t), Store: "postgres",
		DatabaseURL: rig.url, HealthInterval: 100 * time.Millisecond, TrustClientClock: true,
		APIKeys: "bank:" + bankKey, AdminKeys: "ops:" + adminKey}
	srv, err := server.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	servertest.Run(t, srv.Run)
	conn := servertest.Dial(t, srv.Addr())
	servertest.WaitServing(t, conn)
	rig.inst = &instance{srv: srv, conn: conn, client: slotdv1.NewSlotServiceClient(conn), admin: slotdv1.NewAdminServiceClient(conn)}
	rig.http = srv.HTTPAddr()
	bank := as(bankKey)

	n := 0
	next := func(conv string) *slotdv1.TurnRequest {
		n++
		return &slotdv1.TurnRequest{ConversationId: conv, Tool: "bank.open_dispute", TurnId: fmt.Sprintf("t-%d", n),
			Locale: "ru", Now: timestamppb.New(seedNow)}
	}
	slots := []string{"card_last4", "operation_date", "amount", "reason", "original_operation_id", "comment"}
	refused := 0
	for pi, pan := range pans {
		for fi, form := range cardForms(pan) {
			for _, slot := range slots {
				conv := fmt.Sprintf("cards-%d-%d-%s", pi, fi, slot)
				req := next(conv)
				m := map[string]any{"reason": "duplicate"}
				m[slot] = form
				args, err := structpb.NewStruct(m)
				if err != nil {
					t.Fatal(err)
				}
				req.Arguments = args
				resp, err := rig.turn(t, bank, req)
				if err != nil {
					t.Fatalf("%s = %q: %v", slot, form, err)
				}
				if slot == "card_last4" {
					continue // keeps the last four, or refuses what it cannot read
				}
				if resp.Problem == nil {
					t.Errorf("%s = %q: accepted; want it refused", slot, form)
					continue
				}
				refused++
			}
		}
	}
	t.Logf("%d card numbers refused in slots", refused)

	// Ids, argument names and headers holding one are refused.
	pan := pans[0]
	spaced := pan[:4] + " " + pan[4:8] + " " + pan[8:12] + " " + pan[12:]
	for name, edit := range map[string]func(*slotdv1.TurnRequest) context.Context{
		"conversation_id": func(r *slotdv1.TurnRequest) context.Context { r.ConversationId = "chat " + spaced; return bank },
		"turn_id":         func(r *slotdv1.TurnRequest) context.Context { r.TurnId = "turn-" + pan; return bank },
		"argument name": func(r *slotdv1.TurnRequest) context.Context {
			r.Arguments = structOf(t, `{"`+spaced+`": "x"}`)
			return bank
		},
		"x-request-id": func(r *slotdv1.TurnRequest) context.Context {
			return metadata.AppendToOutgoingContext(bank, "x-request-id", "req-"+strings.ReplaceAll(spaced, " ", "-"))
		},
		"locale": func(r *slotdv1.TurnRequest) context.Context {
			r.Locale = strings.ReplaceAll(spaced, " ", "-")
			return bank
		},
	} {
		req := next("ids")
		ctx := edit(req)
		if _, err := rig.turn(t, ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("a card number in the %s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	for _, lookup := range []*slotdv1.GetSessionRequest{{ConversationId: pan}, {ConversationId: "x " + spaced}} {
		if _, err := rig.inst.client.GetSession(bank, lookup); status.Code(err) != codes.InvalidArgument {
			t.Errorf("GetSession(%s): %v, want INVALID_ARGUMENT", lookup.ConversationId, err)
		}
	}

	// A stale session's held arguments keep no card number either.
	stale := next("cards-stale")
	stale.Arguments = structOf(t, `{"card_last4": "4417", "reason": "duplicate"}`)
	if _, err := rig.turn(t, bank, stale); err != nil {
		t.Fatal(err)
	}
	later := next("cards-stale")
	later.Now = timestamppb.New(seedNow.Add(31 * time.Minute))
	later.Arguments = structOf(t, `{"original_operation_id": "op `+spaced+`", "amount": "1 200,50 ₽"}`)
	resp, err := rig.turn(t, bank, later)
	if err != nil || resp.Action != slotdv1.Action_ACTION_RESUME || resp.Problem == nil {
		t.Fatalf("a card number in a stale session's turn: %v, %v; want RESUME with the value refused", resp, err)
	}

	// A READY dispute, completed with backend results that carry card
	// numbers in known and unknown fields, in keys and in a failure's
	// company.
	ready := driveToReady(t, rig, bank, next)
	result := map[string]any{"status": "accepted", "case_id": "case " + spaced, "reason": "paid with " + spaced,
		"card": pan, pan: "key", "nested": map[string]any{"pan": spaced}}
	res, err := structpb.NewValue(result)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rig.inst.client.CompleteSession(bank, &slotdv1.CompleteSessionRequest{ConversationId: ready.Session.ConversationId,
		IdempotencyKey: ready.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: res}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := protojson.Marshal(out)
	rig.keep(string(b))

	// The same over HTTP.
	for _, form := range []string{spaced, pan[:4] + "/" + pan[4:8] + "/" + pan[8:12] + "/" + pan[12:], toArabic(pan)} {
		body := fmt.Sprintf(`{"conversation_id": "http-cards", "tool": "bank.open_dispute", "turn_id": "h-%d", "now": "2026-08-23T10:00:00Z",
			"arguments": {"original_operation_id": %q, "comment": %q}}`, len(rig.responses), "op "+form, form)
		if code := rig.post(t, "/v1/turn", nil, body); code != http.StatusOK {
			t.Errorf("HTTP turn with %q: %d, want 200 with the values refused", form, code)
		}
	}
	if code := rig.post(t, "/v1/turn", map[string]string{"X-Request-Id": "r-" + pan},
		`{"conversation_id": "http-cards", "tool": "bank.open_dispute", "turn_id": "h-id"}`); code != http.StatusBadRequest {
		t.Errorf("HTTP x-request-id with a card number: %d, want 400", code)
	}
	if code := rig.post(t, "/v1/turn", nil, fmt.Sprintf(`{"conversation_id": %q, "tool": "bank.open_dispute", "turn_id": "h-c"}`, "c "+spaced)); code != http.StatusBadRequest {
		t.Errorf("HTTP conversation_id with a card number: %d, want 400", code)
	}

	// The history is read, as an operator would.
	hist, err := rig.inst.admin.GetSessionHistory(as(adminKey), &slotdv1.GetSessionHistoryRequest{ConversationId: "cards-0-1-original_operation_id", Tenant: "bank"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = protojson.Marshal(hist)
	rig.keep(string(b))

	scanTables(t, rig.url)
	for i, r := range rig.responses {
		if l := leaks(r); len(l) > 0 {
			t.Errorf("response %d gives away %v: %s", i, l, cut(r, 600))
		}
	}
	for _, line := range strings.Split(rig.logs.String(), "\n") {
		if l := leaks(line); len(l) > 0 {
			t.Errorf("a log line gives away %v: %s", l, cut(line, 600))
		}
	}
}

// driveToReady plays a dispute to READY.
func driveToReady(t *testing.T, rig *cardRig, ctx context.Context, next func(string) *slotdv1.TurnRequest) *slotdv1.TurnResponse {
	t.Helper()
	var resp *slotdv1.TurnResponse
	for _, args := range []string{`{"card_last4": "•• 4417", "operation_date": "вчера", "amount": "1 200,50 ₽", "reason": "fraud"}`, ``} {
		req := next("cards-ready")
		if args != "" {
			req.Arguments = structOf(t, args)
		} else {
			req.Confirmation = &slotdv1.Confirmation{Accept: true}
		}
		var err error
		if resp, err = rig.turn(t, ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if resp.Action != slotdv1.Action_ACTION_READY {
		t.Fatalf("the dispute answered %v, want READY", resp.Action)
	}
	return resp
}

// scanTables searches every column of every row of every table in the
// database's public schema.
func scanTables(t *testing.T, url string) {
	t.Helper()
	pool := dbtest.Connect(t, url)
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 4 {
		t.Fatalf("slotd's tables: %v; the scan would test nothing", tables)
	}
	scanned := 0
	for _, table := range tables {
		rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT t::text FROM %q t`, table))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			scanned++
			if l := leaks(row); len(l) > 0 {
				t.Errorf("table %s holds %v: %s", table, l, cut(row, 600))
			}
		}
		rows.Close()
	}
	t.Logf("scanned %d rows of %d tables", scanned, len(tables))
	if scanned < 500 {
		t.Errorf("only %d rows scanned; the turns were not stored", scanned)
	}
}

func toArabic(s string) string {
	return strings.Map(func(r rune) rune { return '٠' + r - '0' }, s)
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
