package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"golang.org/x/text/unicode/norm"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/testkit/dbtest"
	"github.com/slotd/slotd/internal/testkit/servertest"
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

// leaks lists what in text is, or gives away, one of the card numbers:
// read as a person reads it, or as it is.
func leaks(text string) []string {
	out := panLeaks(text, pans)
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
		DatabaseURL: rig.url, HealthInterval: 100 * time.Millisecond, Session: session.Config{TrustClientClock: true},
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
		rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT to_jsonb(t)::text FROM %q t`, table))
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

// redactOffTag builds a slotd whose card detector is off
// (internal/redact/off.go): TestNoCardSpellingGetsThrough runs against such
// a build too, and must find leaks there, which proves its scan can.
const redactOffTag = "slotd_test_redact_off"

// spelling is one way a card number is written.
type spelling struct{ name, text, pan string }

// luhnComplete appends the check digit that makes body Luhn-valid.
func luhnComplete(body string) string {
	sum, double := 0, true
	for i := len(body) - 1; i >= 0; i-- {
		d := int(body[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return body + strconv.Itoa((10-sum%10)%10)
}

// groupsOf cuts pan into groups of the sizes given, the last taking the rest.
func groupsOf(pan string, sizes ...int) []string {
	var out []string
	for _, n := range sizes {
		if n >= len(pan) {
			break
		}
		out, pan = append(out, pan[:n]), pan[n:]
	}
	return append(out, pan)
}

// digitsAs writes each ASCII digit of s as form(d).
func digitsAs(s string, form func(d rune) string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteString(form(r - '0'))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func fromZero(zero rune) func(rune) string {
	return func(d rune) string { return string(zero + d) }
}

var (
	superscripts = []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	circled      = []rune("⓪①②③④⑤⑥⑦⑧⑨")
)

// cardSpellings are the ways of writing a card number that a person reads
// as one: separators of every kind, mixed, in runs; groupings that are no
// card's printed layout; digits of other scripts and those NFKC makes
// digits of; invisible characters inside.
func cardSpellings() []spelling {
	visa := pans[0]
	var out []spelling
	add := func(name, text, pan string) { out = append(out, spelling{name, text, pan}) }
	four := func(pan, sep string) string { return strings.Join(groupsOf(pan, 4, 4, 4), sep) }
	for _, sep := range []struct{ name, s string }{
		{"spaces", " "}, {"no-break spaces", "\u00a0"}, {"narrow no-break spaces", "\u202f"}, {"ideographic spaces", "\u3000"},
		{"dots", "."}, {"dashes", "-"}, {"en dashes", "–"}, {"slashes", "/"}, {"commas", ","}, {"spaced dashes", " - "},
		{"pluses", "+"}, {"asterisks", "*"}, {"bars", "|"}, {"colons", ":"}, {"underscores", "_"}, {"tildes", "~"},
		{"three spaces", "   "}, {"a tab", "\t"}, {"two tabs", "\t\t"}, {"space, tab, space", " \t "}, {"brackets", ")("},
	} {
		add("4-4-4-4 split by "+sep.name, four(visa, sep.s), visa)
	}
	add("plain", visa, visa)
	add("mixed: space, dash, dot", visa[:4]+" "+visa[4:8]+"-"+visa[8:12]+"."+visa[12:], visa)
	add("mixed: slash, dots, underscore", visa[:4]+"/"+visa[4:8]+" .. "+visa[8:12]+"_"+visa[12:], visa)
	add("mixed: plus, colon, tilde", visa[:4]+"+"+visa[4:8]+":"+visa[8:12]+" ~ "+visa[12:], visa)
	for _, sizes := range [][]int{{2, 4, 4, 4}, {5, 5, 5}, {6}, {4, 4}, {8}, {3, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}} {
		g := groupsOf(visa, sizes...)
		var n []string
		for _, x := range g {
			n = append(n, strconv.Itoa(len(x)))
		}
		add("grouped "+strings.Join(n, "-"), strings.Join(g, " "), visa)
	}
	add("zero-width spaces", strings.Join(strings.Split(visa, ""), "\u200b"), visa)
	add("bidi override inside", visa[:4]+"\u202e"+visa[4:8]+"\u202c"+visa[8:12]+"\u2066"+visa[12:]+"\u2069", visa)
	add("soft hyphens and joiners", visa[:4]+"\u00ad"+visa[4:8]+"\u2060"+visa[8:12]+"\u200d"+visa[12:], visa)
	for _, sc := range []struct {
		name string
		form func(rune) string
	}{
		{"Arabic-Indic", fromZero('٠')}, {"Extended Arabic-Indic", fromZero('۰')}, {"Devanagari", fromZero('०')},
		{"Bengali", fromZero('০')}, {"Thai", fromZero('๐')}, {"fullwidth", fromZero('０')},
		{"mathematical bold", fromZero(0x1D7CE)}, {"mathematical double-struck", fromZero(0x1D7D8)},
		{"mathematical sans-serif", fromZero(0x1D7E2)}, {"mathematical monospace", fromZero(0x1D7F6)},
		{"superscript", func(d rune) string { return string(superscripts[d]) }},
		{"subscript", fromZero('₀')},
		{"circled", func(d rune) string { return string(circled[d]) }},
	} {
		add(sc.name+" digits", digitsAs(visa, sc.form), visa)
	}
	add("superscript digits, 4-4-4-4", digitsAs(four(visa, " "), func(d rune) string { return string(superscripts[d]) }), visa)
	add("fullwidth digits and ideographic spaces", digitsAs(four(visa, "\u3000"), fromZero('０')), visa)
	add("half fullwidth", digitsAs(visa[:8], fromZero('０'))+visa[8:], visa)
	add("in an English sentence", "pls refund, card "+four(visa, " ")+" exp 12/29 cvc 123", visa)
	add("in a Russian sentence", "оплата картой "+four(visa, "-")+" вчера, срок 12/29", visa)
	add("glued to a word", "card"+visa, visa)
	others := []string{pans[1], pans[3], pans[4], luhnComplete("220070381965240"), luhnComplete("222170381965240"), pans[2]}
	for _, pan := range others {
		add(pan[:2]+"…: plain", pan, pan)
		add(pan[:2]+"…: mixed separators", pan[:4]+" "+pan[4:10]+"-"+pan[10:12]+"."+pan[12:], pan)
		add(pan[:2]+"…: superscripts, 6-rest", digitsAs(strings.Join(groupsOf(pan, 6), "  "), func(d rune) string { return string(superscripts[d]) }), pan)
		add(pan[:2]+"…: circled, 4-6-rest with bars", digitsAs(strings.Join(groupsOf(pan, 4, 6), "|"), func(d rune) string { return string(circled[d]) }), pan)
	}
	return out
}

// escape is a \u or \U escape left in a text, as %q and JSON write them.
var escape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}`)

// texts are the strings a scanned text says: the keys, strings and numbers
// of a JSON text (and of JSON texts inside its strings), each with what is
// left of \u escapes decoded, else the text itself.
func texts(s string, depth int) []string {
	s = escape.ReplaceAllStringFunc(s, func(e string) string {
		n, err := strconv.ParseUint(e[2:], 16, 32)
		if err != nil {
			return e
		}
		return string(rune(n))
	})
	t := strings.TrimSpace(s)
	if depth > 4 || t == "" || t[0] != '{' && t[0] != '[' {
		return []string{s}
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return []string{s}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, texts(x, depth+1)...)
		case json.Number:
			out = append(out, string(x))
		case map[string]any:
			for k, e := range x {
				out = append(out, texts(k, depth+1)...)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// readDigits reads s as a person does: NFKC, format characters unseen,
// digits of every script as ASCII, letters as breaks ("x"), everything
// else (any separator) gone.
func readDigits(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKC.String(s) {
		switch {
		case unicode.IsDigit(r):
			b.WriteByte('0' + byte(digitValue(r)))
		case unicode.IsLetter(r):
			b.WriteByte('x')
		}
	}
	return b.String()
}

// digitValue is the value of a decimal digit (Unicode Nd, whose digits come
// in runs of ten from zero).
func digitValue(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return (r - rune(rg.Lo)) % 10
		}
	}
	return 0
}

// panLeaks lists the card numbers of sent that s gives away: read as a
// person reads it, it holds one (a Luhn-valid run of 13 to 19 digits), or
// its middle eight digits.
func panLeaks(s string, sent []string) []string {
	var out []string
	for _, text := range texts(s, 0) {
		read := readDigits(text)
		for _, pan := range sent {
			if strings.Contains(read, pan) {
				out = append(out, pan)
			} else if strings.Contains(read, pan[4:12]) {
				out = append(out, pan[4:12]+" (the middle of "+pan[:2]+"…)")
			}
		}
	}
	return out
}

// spellingRig drives one slotd process with every spelling in every field,
// and keeps every response.
type spellingRig struct {
	p           *process
	slots       slotdv1.SlotServiceClient
	admin       slotdv1.AdminServiceClient
	tool, mcpTo string
	sent        atomic.Int64

	mu        sync.Mutex
	responses []string
}

func (r *spellingRig) keep(s ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.responses = append(r.responses, s...)
}

// reply keeps a gRPC answer: the message, or the status with its details.
func (r *spellingRig) reply(m proto.Message, err error) {
	r.sent.Add(1)
	if err != nil {
		b, _ := protojson.Marshal(status.Convert(err).Proto())
		r.keep(err.Error(), string(b))
		return
	}
	b, _ := protojson.Marshal(m)
	r.keep(string(b))
}

// http sends one HTTP request and keeps the answer's body and headers; it
// returns the body decoded when it is JSON.
func (r *spellingRig) http(t *testing.T, method, path, key string, header map[string]string, body any) map[string]any {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+r.p.httpAddr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	r.sent.Add(1)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.keep(err.Error())
		return nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for k, vs := range resp.Header {
		r.keep(k + ": " + strings.Join(vs, ","))
	}
	var out map[string]any
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				r.keep(d)
				_ = json.Unmarshal([]byte(d), &out)
			} else {
				r.keep(line)
			}
		}
		return out
	}
	r.keep(string(raw))
	_ = json.Unmarshal(raw, &out)
	return out
}

// mcp calls a tool over MCP, statelessly, with _meta as given.
func (r *spellingRig) mcp(t *testing.T, name string, args, meta map[string]any) map[string]any {
	m := map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.StatelessVersion, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	for k, v := range meta {
		m[k] = v
	}
	body := map[string]any{"jsonrpc": "2.0", "id": r.sent.Load(), "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args, "_meta": m}}
	hdr := map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": mcp.StatelessVersion,
		"Mcp-Method": "tools/call", "Mcp-Name": name}
	return r.http(t, http.MethodPost, mcp.Path, bankKey, hdr, body)
}

// send writes sp into every slot of a free-text contract and every field
// a caller controls, over gRPC, HTTP and MCP; the i-th spelling's
// conversations are its own.
func (r *spellingRig) send(t *testing.T, i int, sp spelling) {
	text := sp.text
	bank, admin := as(bankKey), as(adminKey)
	all := map[string]any{}
	for s := 1; s <= 20; s++ {
		all[fmt.Sprintf("slot_%02d", s)] = text
	}
	conv := func(transport, what string) string { return fmt.Sprintf("%s-%d-%s", transport, i, what) }

	// gRPC.
	for what, edit := range map[string]func(*slotdv1.TurnRequest) context.Context{
		"slots":           func(q *slotdv1.TurnRequest) context.Context { q.Arguments = mustStruct(t, all); return bank },
		"conversation_id": func(q *slotdv1.TurnRequest) context.Context { q.ConversationId = "chat " + text; return bank },
		"turn_id":         func(q *slotdv1.TurnRequest) context.Context { q.TurnId = "turn " + text; return bank },
		"locale":          func(q *slotdv1.TurnRequest) context.Context { q.Locale = text; return bank },
		"time_zone":       func(q *slotdv1.TurnRequest) context.Context { q.TimeZone = text; return bank },
		"argument name": func(q *slotdv1.TurnRequest) context.Context {
			q.Arguments = mustStruct(t, map[string]any{text: "x"})
			return bank
		},
		"tool": func(q *slotdv1.TurnRequest) context.Context { q.Tool = "bank " + text; return bank },
		"x-request-id": func(q *slotdv1.TurnRequest) context.Context {
			return metadata.AppendToOutgoingContext(bank, "x-request-id", "req "+text)
		},
	} {
		q := &slotdv1.TurnRequest{ConversationId: conv("g", what), TurnId: "t1", Tool: r.tool, Locale: "en",
			Arguments: mustStruct(t, map[string]any{"slot_01": "x"})}
		ctx := edit(q)
		r.reply(r.slots.Turn(ctx, q))
	}
	r.reply(r.slots.GetSession(bank, &slotdv1.GetSessionRequest{ConversationId: "chat " + text}))
	r.reply(r.admin.ListSessions(admin, &slotdv1.ListSessionsRequest{Tenant: text}))
	r.reply(r.admin.ListSessions(admin, &slotdv1.ListSessionsRequest{Tenant: "bank", Tool: text}))
	r.reply(r.admin.GetSessionHistory(admin, &slotdv1.GetSessionHistoryRequest{ConversationId: "chat " + text, Tenant: "bank"}))
	// HTTP.
	turn := func(what string) map[string]any {
		return map[string]any{"conversation_id": conv("h", what), "turn_id": "t1", "tool": r.tool, "locale": "en", "arguments": map[string]any{"slot_01": "x"}}
	}
	for what, edit := range map[string]func(map[string]any){
		"slots":           func(q map[string]any) { q["arguments"] = all },
		"conversation_id": func(q map[string]any) { q["conversation_id"] = "chat " + text },
		"turn_id":         func(q map[string]any) { q["turn_id"] = "turn " + text },
		"locale":          func(q map[string]any) { q["locale"] = text },
		"time_zone":       func(q map[string]any) { q["time_zone"] = text },
		"argument name":   func(q map[string]any) { q["arguments"] = map[string]any{text: "x"} },
		"tool":            func(q map[string]any) { q["tool"] = "bank " + text },
	} {
		q := turn(what)
		edit(q)
		r.http(t, http.MethodPost, "/v1/turn", bankKey, nil, q)
	}
	r.http(t, http.MethodPost, "/v1/turn", bankKey, map[string]string{"X-Request-Id": "req " + text}, turn("x-request-id"))
	r.http(t, http.MethodGet, "/v1/session?conversation_id="+url.QueryEscape("chat "+text), bankKey, nil, nil)
	r.http(t, http.MethodGet, "/v1/admin/sessions?tenant="+url.QueryEscape(text), adminKey, nil, nil)
	r.http(t, http.MethodGet, "/v1/admin/sessions?tenant=bank&tool="+url.QueryEscape(text), adminKey, nil, nil)
	r.http(t, http.MethodGet, "/v1/admin/sessions/history?tenant=bank&conversation_id="+url.QueryEscape("chat "+text), adminKey, nil, nil)
	// MCP, statelessly: the conversation and turn are _meta's.
	meta := func(what string) map[string]any {
		return map[string]any{mcp.MetaConversation: conv("m", what), mcp.MetaTurn: "t1", mcp.MetaLocale: "en"}
	}
	one := map[string]any{"slot_01": "x"}
	r.mcp(t, r.mcpTo, all, meta("slots"))
	for what, edit := range map[string]func(map[string]any){
		"conversation_id": func(m map[string]any) { m[mcp.MetaConversation] = "chat " + text },
		"turn_id":         func(m map[string]any) { m[mcp.MetaTurn] = "turn " + text },
		"locale":          func(m map[string]any) { m[mcp.MetaLocale] = text },
		"time_zone":       func(m map[string]any) { m[mcp.MetaTimeZone] = text },
		"other _meta":     func(m map[string]any) { m["x-note"], m[text] = text, "a key" },
	} {
		m := meta(what)
		edit(m)
		r.mcp(t, r.mcpTo, one, m)
	}
	r.mcp(t, r.mcpTo, map[string]any{text: "x"}, meta("argument name"))
	r.mcp(t, "tool "+text, one, meta("tool"))
}

// complete plays a conversation to READY over each transport and gives
// CompleteSession a backend result holding every spelling, in values and
// in keys.
func (r *spellingRig) complete(t *testing.T, spellings []spelling) {
	result := map[string]any{"status": "accepted"}
	var all []any
	for i, sp := range spellings {
		result[sp.text] = fmt.Sprintf("key %d", i)
		all = append(all, sp.text)
	}
	result["notes"], result["nested"] = all, map[string]any{"list": all}
	bank := as(bankKey)
	one := map[string]any{"slot_01": "ok"}

	ready, err := r.slots.Turn(bank, &slotdv1.TurnRequest{ConversationId: "g-ready", TurnId: "t1", Tool: r.tool, Locale: "en",
		Arguments: mustStruct(t, one)})
	r.reply(ready, err)
	if err != nil || ready.Action != slotdv1.Action_ACTION_READY {
		t.Fatalf("a turn of %s with one slot: %v, %v; want READY", r.tool, ready.GetAction(), err)
	}
	res, err := structpb.NewValue(result)
	if err != nil {
		t.Fatal(err)
	}
	r.reply(r.slots.CompleteSession(bank, &slotdv1.CompleteSessionRequest{ConversationId: "g-ready",
		IdempotencyKey: ready.IdempotencyKey, Outcome: &slotdv1.CompleteSessionRequest_Result{Result: res}}))

	out := r.http(t, http.MethodPost, "/v1/turn", bankKey, nil,
		map[string]any{"conversation_id": "h-ready", "turn_id": "t1", "tool": r.tool, "locale": "en", "arguments": one})
	key := out["idempotencyKey"]
	if key == nil {
		key = out["idempotency_key"]
	}
	if key == nil {
		t.Fatalf("an HTTP turn of %s with one slot: %v; want READY", r.tool, out)
	}
	r.http(t, http.MethodPost, "/v1/session/complete", bankKey, nil,
		map[string]any{"conversation_id": "h-ready", "idempotency_key": key, "result": result})

	meta := map[string]any{mcp.MetaConversation: "m-ready", mcp.MetaTurn: "t1"}
	out = r.mcp(t, r.mcpTo, one, meta)
	rs, _ := out["result"].(map[string]any)
	sc, _ := rs["structuredContent"].(map[string]any)
	mkey, _ := sc["idempotency_key"].(string)
	if mkey == "" {
		t.Fatalf("an MCP call of %s with one slot: %v; want READY with an idempotency key", r.mcpTo, out)
	}
	r.mcp(t, "slotd_complete", map[string]any{"idempotency_key": mkey, "result": result}, meta)
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rowsAsText reads every row of every table of the public schema as
// to_jsonb(row)::text.
func rowsAsText(t *testing.T, url string) map[string][]string {
	t.Helper()
	pool := dbtest.Connect(t, url)
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := pool.Query(ctx, fmt.Sprintf(`SELECT to_jsonb(t)::text FROM %s t`, pgx.Identifier{table}.Sanitize()))
		if err != nil {
			t.Fatal(err)
		}
		if out[table], err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// spellingLeaks is what one run found: leaks by where, and how much it
// looked at.
type spellingLeaks struct {
	tables, responses, logs []string
	sent, rows, lines       int
}

// runSpellings sends every spelling into every field of a slotd built with
// tags, on its own database, then scans every row, response and log line.
func runSpellings(t *testing.T, tags string, spellings []spelling) spellingLeaks {
	t.Helper()
	db := dbtest.NewDatabase(t)
	contracts := contractsDir(t)
	bin := buildSlotdTagged(t, tags)
	start := time.Now()
	p := startBinary(t, bin, "--store", "postgres", "--database-url", db, "--contracts", contracts,
		"--api-keys", "bank:"+bankKey, "--admin-keys", "ops:"+adminKey)
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := &spellingRig{p: p, slots: slotdv1.NewSlotServiceClient(conn), admin: slotdv1.NewAdminServiceClient(conn),
		tool: "test.many_slots", mcpTo: contract.ProviderName("test.many_slots")}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r.send(t, i, spellings[i])
			}
		}()
	}
	for i := range spellings {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	r.complete(t, spellings)
	t.Logf("%d requests sent in %v", r.sent.Load(), time.Since(start).Round(time.Millisecond))

	sent := make([]string, 0, len(spellings))
	for _, sp := range spellings {
		if !slices.Contains(sent, sp.pan) {
			sent = append(sent, sp.pan)
		}
	}
	var found spellingLeaks
	found.sent = int(r.sent.Load())
	for table, rows := range rowsAsText(t, db) {
		for _, row := range rows {
			found.rows++
			if l := panLeaks(row, sent); len(l) > 0 {
				found.tables = append(found.tables, fmt.Sprintf("table %s holds %v: %s", table, l, cut(row, 400)))
			}
		}
	}
	for _, resp := range r.responses {
		if l := panLeaks(resp, sent); len(l) > 0 {
			found.responses = append(found.responses, fmt.Sprintf("a response gives away %v: %s", l, cut(resp, 400)))
		}
	}
	log, err := os.ReadFile(p.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		found.lines++
		if l := panLeaks(line, sent); len(l) > 0 {
			found.logs = append(found.logs, fmt.Sprintf("a log line gives away %v: %s", l, cut(line, 400)))
		}
	}
	return found
}

// No spelling of a card number is stored, returned or logged: at least 60
// spellings, each sent into every slot of a free-text contract
// (test.many_slots) and every field a caller controls (ids, locale, time
// zone, argument names, tool names, x-request-id, MCP _meta, CompleteSession
// results, admin filters), over gRPC, HTTP and MCP, against slotd in a child
// process on Postgres; then every row of every table, every response and
// every log line is read as a person reads it (NFKC, separators gone) and
// searched for the card numbers: none is found. The same run against a
// slotd built with its detector off (the slotd_test_redact_off build tag,
// which only this test sets) must find them, or the search proves nothing.
func TestNoCardSpellingGetsThrough(t *testing.T) {
	t.Parallel()
	spellings := cardSpellings()
	if len(spellings) < 60 {
		t.Fatalf("%d spellings; want at least 60", len(spellings))
	}
	for _, sp := range spellings {
		if !luhnValid(sp.pan) {
			t.Fatalf("%s: %s is no Luhn-valid card number", sp.name, sp.pan)
		}
		if got := readDigits(sp.text); !strings.Contains(got, sp.pan) {
			t.Fatalf("%s: %q reads as %q, not as %s", sp.name, sp.text, got, sp.pan)
		}
	}
	t.Run("detector on", func(t *testing.T) {
		t.Parallel()
		found := runSpellings(t, "", spellings)
		t.Logf("%d spellings, %d requests, %d rows, %d log lines scanned", len(spellings), found.sent, found.rows, found.lines)
		if found.rows < 1000 || found.lines < 1000 {
			t.Errorf("only %d rows and %d log lines to scan: the requests were not served", found.rows, found.lines)
		}
		for _, l := range slices.Concat(found.tables, found.responses, found.logs)[:min(30, len(found.tables)+len(found.responses)+len(found.logs))] {
			t.Error(l)
		}
		t.Logf("found %d in tables, %d in responses, %d in log lines", len(found.tables), len(found.responses), len(found.logs))
	})
	t.Run("detector off", func(t *testing.T) {
		t.Parallel()
		found := runSpellings(t, redactOffTag, spellings)
		t.Logf("without the detector: %d in tables, %d in responses, %d in log lines", len(found.tables), len(found.responses), len(found.logs))
		if len(found.tables) == 0 || len(found.responses) == 0 || len(found.logs) == 0 {
			t.Errorf("without the detector the scan found %d in tables, %d in responses, %d in log lines; want some in each, or the scan proves nothing",
				len(found.tables), len(found.responses), len(found.logs))
		}
	})
}

func luhnValid(pan string) bool { return luhnComplete(pan[:len(pan)-1]) == pan }
