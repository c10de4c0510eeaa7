package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/app/mcpload"
	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/testkit/servertest"
)

// What deploy/ ships for operators: the Prometheus alerting rules and the
// Grafana dashboard. promtool checks the rules and runs their unit tests;
// every metric a rule or a panel names must be one a running slotd exports.

const (
	alertsFile     = "../deploy/prometheus/alerts.yaml"
	alertTestsFile = "../deploy/prometheus/alerts_test.yaml"
	dashboardFile  = "../deploy/grafana/slotd.json"
)

// promtool finds promtool on PATH or where `make promtool` puts it, or
// fails: the rules are never left untested.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	if p, err := filepath.Abs("../.bin/promtool"); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("promtool is needed to test deploy/prometheus and is neither on PATH nor in .bin: " +
		"run `make promtool` (it takes it from the Debian package prometheus; `make test` does it first)")
	return ""
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestAlertRules(t *testing.T) {
	t.Parallel()
	runPromtool(t, "check", "rules", alertsFile)
	runPromtool(t, "test", "rules", alertTestsFile)
}

// alertExprs are the expressions of alerts.yaml, by alert name.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	exprs := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			exprs[r.Alert+r.Record] = r.Expr
		}
	}
	if len(exprs) == 0 {
		t.Fatalf("%s has no rules", alertsFile)
	}
	return exprs
}

// grafanaVars are the dashboard's variables, as a query gets them.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$job", ".*", "$instance", ".*")

// dashboardExprs are the queries of the dashboard's panels and variables,
// with the variables filled in, by panel title.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type target struct{ Expr string }
	type panel struct {
		Title   string
		Targets []target
		Panels  []panel
	}
	var dash struct {
		Panels     []panel
		Templating struct {
			List []struct {
				Name, Type, Query string
			}
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	exprs := map[string]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for i, tg := range p.Targets {
				exprs[fmt.Sprintf("panel %q query %d", p.Title, i+1)] = grafanaVars.Replace(tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		// label_values(metric{matchers}, label): the metric is a query.
		q := strings.TrimSuffix(strings.TrimPrefix(v.Query, "label_values("), ")")
		if i := strings.LastIndex(q, ","); i >= 0 && q != v.Query {
			q = q[:i]
		}
		exprs["variable "+v.Name] = grafanaVars.Replace(q)
	}
	if len(exprs) < 10 {
		t.Fatalf("%s has %d queries; the panels were not read", dashboardFile, len(exprs))
	}
	return exprs
}

var (
	promQuoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promWords    = []string{"and", "or", "unless", "bool", "offset", "Inf", "NaN", "inf", "nan"}
)

// metricNames are the metric names in a PromQL expression: what is left
// once strings, label lists, matchers and ranges are taken out, but
// functions, aggregations, keywords and numbers.
func metricNames(expr string) []string {
	e := promQuoted.ReplaceAllString(expr, `""`)
	e = promGrouping.ReplaceAllString(e, " ")
	e = promMatchers.ReplaceAllString(e, " ")
	e = promRanges.ReplaceAllString(e, " ")
	var names []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		name := e[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsRune("0123456789.", rune(e[loc[0]-1])) {
			continue // 1e9, 5m
		}
		if rest := strings.TrimLeft(e[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function or an aggregation
		}
		if slices.Contains(promWords, name) {
			continue
		}
		names = append(names, name)
	}
	return names
}

func TestMetricNamesOfAQuery(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string][]string{
		`sum by (job, le) (rate(slotd_turn_duration_seconds_bucket{action!="ERROR", x=~"a|b{1}"}[5m])) > 0.5`: {"slotd_turn_duration_seconds_bucket"},
		`time() - slotd_janitor_last_success_timestamp_seconds > 900 and on (job) up == 0`:                    {"slotd_janitor_last_success_timestamp_seconds", "up"},
		`a / ignoring(result) group_left(tool) b offset 5m > 1e9`:                                             {"a", "b"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

// exported are the names of the samples in /metrics: a histogram's
// _bucket, _sum and _count, a summary's _sum and _count beside its name.
func exported(fams map[string]*dto.MetricFamily) map[string]bool {
	names := map[string]bool{}
	for name, f := range fams {
		names[name] = true
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}

// scrapeMetrics reads the families of the server's /metrics.
func scrapeMetrics(t *testing.T, srv *server.Server) map[string]*dto.MetricFamily {
	t.Helper()
	return servertest.Metrics(t, srv.MetricsAddr())
}

// TestDeployNamesExportedMetrics drives a slotd on Postgres through what
// makes its metrics appear (gRPC turns up to a hand-off, a failed turn, an
// HTTP turn, an MCP tool call, a call refused without a key), then checks
// every metric that an alert or a panel names against its /metrics.
func TestDeployNamesExportedMetrics(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys, func(c *server.Config) {
		c.MetricsListen = "127.0.0.1:0"
	})
	turn := func(ctx context.Context, conv string, n int, tool, args string) (*slotdv1.TurnResponse, error) {
		return inst.client.Turn(ctx, &slotdv1.TurnRequest{ConversationId: conv, Tool: tool, TurnId: fmt.Sprintf("%s/%d", conv, n),
			Locale: "ru", Now: nowPB(), Arguments: structOf(t, args)})
	}
	// gRPC: the dispute example to a hand-off after three bad reasons.
	for i, args := range []string{seedFirstTurn, `{"reason": "chargeback"}`, `{"reason": "верните деньги"}`, `{"reason": "idk"}`} {
		r, err := turn(as(bankKey), "deploy-grpc", i+1, "bank.open_dispute", args)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if i == 3 && r.Action != slotdv1.Action_ACTION_HANDOFF {
			t.Fatalf("turn 4 = %v, want a hand-off", r.Action)
		}
	}
	if _, err := turn(as(bankKey), "deploy-grpc", 5, "no.such_tool", `{}`); status.Code(err) == codes.OK {
		t.Fatal("a turn of a tool the catalog lacks succeeded")
	}
	if _, err := turn(context.Background(), "deploy-grpc", 6, "bank.open_dispute", `{}`); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a turn without a key = %v, want Unauthenticated", err)
	}
	// HTTP.
	base := "http://" + inst.srv.HTTPAddr()
	if r := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, seedTurnJSON); r.status != http.StatusOK {
		t.Fatalf("POST /v1/turn = %d %s", r.status, r.body)
	}
	// MCP.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mc := &mcpload.Client{URL: base + "/mcp", Key: bankKey}
	sid, err := mc.Open(ctx, false)
	if err != nil {
		t.Fatalf("MCP initialize: %v", err)
	}
	if r, err := mc.Post(ctx, sid, mcpload.Version, mcpload.DisputeCall(1)); err != nil || r.Status != http.StatusOK {
		t.Fatalf("MCP tools/call = %v, %v", r, err)
	}

	fams := scrapeMetrics(t, inst.srv)
	names := exported(fams)
	check := func(what string, exprs map[string]string) {
		for where, expr := range exprs {
			found := metricNames(expr)
			if len(found) == 0 {
				t.Errorf("%s %s names no metric: %s", what, where, expr)
			}
			for _, n := range found {
				if !names[n] {
					t.Errorf("%s %s names %s, which slotd does not export", what, where, n)
				}
			}
		}
	}
	check(filepath.Base(alertsFile), alertExprs(t))
	check(filepath.Base(dashboardFile), dashboardExprs(t))

	// The MCP cap the near-cap alert divides by.
	if f := fams["slotd_mcp_sessions_max"]; f == nil || len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != mcp.DefaultMaxSessions {
		t.Errorf("slotd_mcp_sessions_max = %v, want %d", f, mcp.DefaultMaxSessions)
	}
}

// TestDashboardQueriesParse has promtool parse every query of the
// dashboard, as the expression of a recording rule.
func TestDashboardQueriesParse(t *testing.T) {
	t.Parallel()
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	exprs := dashboardExprs(t)
	for i, k := range slices.Sorted(maps.Keys(exprs)) {
		q, _ := json.Marshal(exprs[k]) // a JSON string is a YAML string
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, q)
	}
	f := filepath.Join(t.TempDir(), "dashboard.yaml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "check", "rules", f)
}
