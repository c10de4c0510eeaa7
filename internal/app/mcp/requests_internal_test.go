package mcp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireCases are messages as clients send them, well and badly formed:
// what the handler reads of each must be what the SDK reads of it.
var wireCases = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bank_open_dispute","arguments":{"amount":"12.50"}}}`,
	`  {"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"x"}}` + "\n",
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":-3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call"}`,
	`{"jsonrpc":"1.0","id":1,"method":"tools/call"}`,
	`{"id":1,"method":"tools/call"}`,
	`{"JSONRPC":"2.0","ID":1,"Method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","method":"initialize"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":"\u0000\ud800"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"} trailing`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","id":2}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":}}`,
	`[]`,
	`"tools/call"`,
	``,
	`null`,
}

func TestDecodeRequestReadsWhatTheSDKReads(t *testing.T) {
	t.Parallel()
	for _, raw := range wireCases {
		want := (*jsonrpc.Request)(nil)
		if msg, err := jsonrpc.DecodeMessage([]byte(raw)); err == nil {
			want, _ = msg.(*jsonrpc.Request)
		}
		got := decodeRequest([]byte(raw))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %#v\n want %#v", raw, got, want)
		}
	}
}

func TestRequestsSplitsBatches(t *testing.T) {
	t.Parallel()
	body := `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}},` +
		`{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":1,"result":{}},{"bad"}]`
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewBufferString(body))
	msgs, batch := requests(r)
	if !batch || len(msgs) != 0 {
		// {"bad"} is not JSON: the batch does not split, the SDK refuses it.
		t.Fatalf("requests = %d messages, batch %v; want none of a batch that is not JSON", len(msgs), batch)
	}
	body = body[:len(body)-len(`,{"bad"}]`)] + "]"
	msgs, batch = requests(httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewBufferString(body)))
	if !batch || len(msgs) != 2 || msgs[0].Method != "initialize" || !msgs[0].ID.IsValid() ||
		msgs[1].Method != "notifications/initialized" || msgs[1].ID.IsValid() {
		t.Fatalf("requests = %+v, batch %v", msgs, batch)
	}
}

// BenchmarkRequests reads a tools/call as the handler does for every one.
func BenchmarkRequests(b *testing.B) {
	body := []byte(wireCases[0])
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		if msgs, _ := requests(r); len(msgs) != 1 {
			b.Fatal("no request")
		}
	}
}
