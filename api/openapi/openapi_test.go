package openapi_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/slotd/slotd/api/openapi"
	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

type document struct {
	Swagger     string                                         `json:"swagger"`
	Paths       map[string]map[string]operation                `json:"paths"`
	Definitions map[string]struct{ Properties map[string]any } `json:"definitions"`
}

type operation struct {
	OperationID string                     `json:"operationId"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

func load(t *testing.T) document {
	t.Helper()
	var d document
	if err := json.Unmarshal(openapi.Document, &d); err != nil {
		t.Fatalf("slotd.swagger.json is not JSON: %v", err)
	}
	if d.Swagger != "2.0" {
		t.Fatalf("swagger = %q, want 2.0", d.Swagger)
	}
	return d
}

// TestEveryRPCHasAnHTTPRoute fails when an RPC is added to the proto
// without a rule in api/gateway.yaml: grpc-gateway would leave it out of
// the HTTP API without a word.
func TestEveryRPCHasAnHTTPRoute(t *testing.T) {
	t.Parallel()
	d := load(t)
	ops := map[string]string{}
	for path, byMethod := range d.Paths {
		for method, op := range byMethod {
			ops[op.OperationID] = strings.ToUpper(method) + " " + path
			if _, ok := op.Responses["default"]; !ok {
				t.Errorf("%s %s has no default (problem) response: add it to api/openapi/config.yaml", method, path)
			}
		}
	}
	services := slotdv1.File_slotd_v1_slotd_proto.Services()
	var missing []string
	for i := range services.Len() {
		s := services.Get(i)
		for j := range s.Methods().Len() {
			id := string(s.Name()) + "_" + string(s.Methods().Get(j).Name())
			if _, ok := ops[id]; !ok {
				missing = append(missing, id)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("RPCs without an HTTP route: %s; add a rule to api/gateway.yaml and run make proto", strings.Join(missing, ", "))
	}
	for id, route := range ops {
		if strings.HasPrefix(id, "AdminService_") && !strings.Contains(route, " /v1/admin/") {
			t.Errorf("%s is at %s, want it under /v1/admin/", id, route)
		}
	}
}

func TestProblemSchemaHasTheMembersAgentsDecideBy(t *testing.T) {
	t.Parallel()
	p, ok := load(t).Definitions["v1Problem"]
	if !ok {
		t.Fatal("no v1Problem definition")
	}
	for _, member := range []string{"type", "title", "status", "detail", "retryable", "retry_after_seconds", "owner_action_required", "errors"} {
		if _, ok := p.Properties[member]; !ok {
			t.Errorf("v1Problem lacks %q (proto field names are the JSON names)", member)
		}
	}
}
