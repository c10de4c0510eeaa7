package mcp

import (
	"bytes"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeSeeds are messages as clients and attackers send them: calls with
// every kind of id, notifications, responses, names in other cases,
// escapes, duplicated keys, wrong types, trailing bytes, broken JSON.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bank.open_dispute","arguments":{"amount":"1 200,50 ₽","card":"•• 4417"}}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{}}`,
	`  {"jsonrpc":"2.0","id":1.5,"method":"tools/call"}` + "\n",
	`{"jsonrpc":"2.0","id":-7,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":true,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"tools/call"}`,
	`{"jsonrpc":"1.0","id":1,"method":"tools/call"}`,
	`{"id":1,"method":"tools/call"}`,
	`{"JSONRPC":"2.0","ID":1,"Method":"tools/call"}`,
	`{"jsonrpc":"2.0","Id":1,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\u002fcall"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"id":"two","method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","error":5}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","error":{"code":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"} trailing`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"}{"jsonrpc":"2.0","id":2,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":[}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","x":nul}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"s":"\ud800"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/\xffcall\"}",
	`{"jsonrpc":"2.0","id":99999999999999999999,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":"4111 1111 1111 1111","method":"tools/call"}`,
	`[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`,
	`"tools/call"`,
	`null`,
	``,
	`{}`,
}

// decodeRequest reads a message as the SDK does: the same requests, with
// the same methods, ids and parameters, and nothing else taken for one.
func FuzzDecodeRequestAsTheSDK(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.Count(raw, []byte("{"))+bytes.Count(raw, []byte("[")) > 900 {
			t.Skip("deeper than the edge lets through")
		}
		got, ok := decodeRequest(raw)
		msg, err := jsonrpc.DecodeMessage(raw)
		want, isRequest := msg.(*jsonrpc.Request)
		if ok != (err == nil && isRequest) {
			t.Fatalf("%q: decodeRequest says request=%v; the SDK: %v, %T", raw, ok, err, msg)
		}
		if !ok {
			return
		}
		if got.Method != want.Method || got.ID != want.ID || !bytes.Equal(got.Params, want.Params) {
			t.Fatalf("%q: decodeRequest read %q %v %s; the SDK %q %v %s", raw, got.Method, got.ID.Raw(), got.Params, want.Method, want.ID.Raw(), want.Params)
		}
	})
}
