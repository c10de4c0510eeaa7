package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/app/mcp"
	"github.com/slotd/slotd/internal/app/mcpload"
)

// The transports the bench drives slotd's side over: the same dialogues,
// the same ids, the same expected actions; only the path to the service
// differs. HTTP is the gateway's POST /v1/turn with the JSON it expects; MCP
// is tools/call over Streamable HTTP, one MCP session per conversation,
// opened on its first turn and ended after its last.
const (
	TransportGRPC = "grpc"
	TransportHTTP = "http"
	TransportMCP  = "mcp"
)

// transportName is how the report names a transport.
func transportName(t string) string {
	switch t {
	case TransportHTTP:
		return "HTTP"
	case TransportMCP:
		return "MCP"
	}
	return "gRPC"
}

// httpClient is the bench's HTTP client: one keep-alive connection per
// conversation, so that no turn pays for a connection.
func httpClient(conversations int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conversations * 2
	t.MaxIdleConnsPerHost = conversations * 2
	return &http.Client{Transport: t}
}

// httpBodies are each step's JSON request body but for its ids: the
// members protojson gives the request, without the braces, so that a turn
// only writes its two ids in front.
func httpBodies(ds []Dialogue) ([][][]byte, error) {
	out := make([][][]byte, len(ds))
	for i := range ds {
		for j := range ds[i].Steps {
			b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(ds[i].request(j))
			if err != nil {
				return nil, fmt.Errorf("dialogue %s step %d: %w", ds[i].Name, j+1, err)
			}
			b = bytes.TrimSpace(b)
			out[i] = append(out[i], b[1:len(b)-1]) // protojson always gives an object
		}
	}
	return out, nil
}

// httpTurn plays one step of a dialogue as POST /v1/turn.
func httpTurn(client *http.Client, base, key string, ds []Dialogue) (turnFunc, error) {
	bodies, err := httpBodies(ds)
	if err != nil {
		return nil, err
	}
	index := dialogueIndex(ds)
	return func(ctx context.Context, d *Dialogue, step int, conv, turnID string) error {
		ids, _ := json.Marshal(struct {
			Conversation string `json:"conversation_id"`
			Turn         string `json:"turn_id"`
		}{conv, turnID})
		body := append(ids[:len(ids)-1:len(ids)-1], ',')
		body = append(body, bodies[index[d.Name]][step]...)
		body = append(body, '}')
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/turn", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s step %d: HTTP %d: %.200s", d.Name, step+1, resp.StatusCode, b)
		}
		var got struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			return fmt.Errorf("%s step %d: the answer is not JSON: %w", d.Name, step+1, err)
		}
		if want := d.Steps[step].Want.String(); got.Action != want {
			return fmt.Errorf("%s step %d: slotd answered %s, want %s", d.Name, step+1, got.Action, want)
		}
		return nil
	}, nil
}

// mcpTurn plays one step of a dialogue as an MCP tools/call: the step's
// arguments, the user's yes or no as slotd_confirm, the conversation, turn,
// locale and time zone in _meta. A conversation's first step opens its MCP
// session, its last (or one that fails) ends it.
func mcpTurn(client *http.Client, base, key string) turnFunc {
	c := &mcpload.Client{URL: base + "/mcp", Key: key, HTTP: client}
	var sessions sync.Map // conversation -> MCP session id
	var ids atomic.Int64
	end := func(conv string) {
		if sid, ok := sessions.LoadAndDelete(conv); ok {
			endSession(client, c, sid.(string))
		}
	}
	return func(ctx context.Context, d *Dialogue, step int, conv, turnID string) (err error) {
		st := d.Steps[step]
		last := step == len(d.Steps)-1
		defer func() {
			if err != nil || last {
				end(conv)
			}
		}()
		sid, ok := sessions.Load(conv)
		if !ok {
			s, err := c.Open(ctx, false)
			if err != nil {
				return fmt.Errorf("%s step %d: open an MCP session: %w", d.Name, step+1, err)
			}
			sessions.Store(conv, s)
			sid = s
		}
		args := map[string]any{}
		for k, v := range st.Args {
			args[k] = v
		}
		if st.Confirm != nil {
			args[mcp.ConfirmArg] = *st.Confirm
		}
		call, err := json.Marshal(map[string]any{
			"jsonrpc": "2.0", "id": ids.Add(1), "method": "tools/call",
			"params": map[string]any{
				"name": contract.ProviderName(d.tool(step)), "arguments": args,
				"_meta": map[string]any{mcp.MetaConversation: conv, mcp.MetaTurn: turnID, mcp.MetaLocale: d.Locale, mcp.MetaTimeZone: d.Zone},
			},
		})
		if err != nil {
			return err
		}
		r, err := c.Post(ctx, sid.(string), mcpload.Version, string(call))
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("%s step %d: HTTP %d: %.200s", d.Name, step+1, r.Status, r.Body)
		}
		action, err := mcpAction(r.Body)
		if err != nil {
			return fmt.Errorf("%s step %d: %w", d.Name, step+1, err)
		}
		if want := strings.TrimPrefix(st.Want.String(), "ACTION_"); action != want {
			return fmt.Errorf("%s step %d: slotd answered %s, want %s", d.Name, step+1, action, want)
		}
		return nil
	}
}

// endSession ends an MCP session as a client does when it is done with
// it (DELETE), so that the bench leaves no sessions to slotd's caps.
func endSession(client *http.Client, c *mcpload.Client, sid string) {
	req, err := http.NewRequest(http.MethodDelete, c.URL, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", mcpload.Version)
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	if resp, err := client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// mcpAction is the action of a tools/call's result, sent as JSON or as an
// event stream; an error result, or none, is an error.
func mcpAction(body []byte) (string, error) {
	msg := body
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		msg = nil
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && bytes.Contains(data, []byte(`"result"`)) {
				msg = append([]byte(nil), data...)
			}
		}
	}
	var got struct {
		Result *struct {
			IsError    bool `json:"isError"`
			Structured struct {
				Action string `json:"action"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &got); err != nil || got.Result == nil {
		return "", fmt.Errorf("no tools/call result in %.200s", body)
	}
	if got.Result.IsError {
		return "", errors.New("the tool call failed: " + strconv.Quote(string(msg)))
	}
	return got.Result.Structured.Action, nil
}

// dialogueIndex is the place of each dialogue by name.
func dialogueIndex(ds []Dialogue) map[string]int {
	out := make(map[string]int, len(ds))
	for i, d := range ds {
		out[d.Name] = i
	}
	return out
}
