// Package mcpload plays what a hostile MCP client does to slotd's /mcp
// endpoint, over raw HTTP so that nothing on the client's side smooths it
// over: it opens sessions and never ends them, sends batches of
// initialize, leaves forms unanswered and hangs up on them; and it times
// what another tenant gets meanwhile. The attack tests and
// `go run ./internal/app/mcpload/cmd/mcpload` measure with it.
package mcpload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Version is the protocol version the client speaks: the last with
// sessions.
const Version = "2025-11-25"

// BatchVersion is the last protocol version with JSON-RPC batches.
const BatchVersion = "2025-03-26"

// Client is one tenant's MCP client.
type Client struct {
	// URL is the endpoint, http://host:port/mcp.
	URL string
	// Key is the tenant's key; "" sends none.
	Key string
	// HTTP sends the requests; a client of its own when nil.
	HTTP *http.Client
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// Response is what one POST got.
type Response struct {
	Status  int
	Session string // Mcp-Session-Id
	Body    []byte
}

func (c *Client) post(ctx context.Context, sid, version, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	return c.http().Do(req)
}

// Post sends one body and reads the whole answer.
func (c *Client) Post(ctx context.Context, sid, version, body string) (Response, error) {
	resp, err := c.post(ctx, sid, version, body)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Session: resp.Header.Get("Mcp-Session-Id"), Body: b}, err
}

// Initialize is an initialize request of the given id; elicit declares
// that the client shows forms.
func Initialize(id int, version string, elicit bool) string {
	caps := `{}`
	if elicit {
		caps = `{"elicitation":{}}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"mcpload","version":"1"}}}`,
		id, version, caps)
}

// Open opens a session as a client does (initialize, then initialized)
// and returns its id; the status of a refused initialize is in the error.
func (c *Client) Open(ctx context.Context, elicit bool) (string, error) {
	r, err := c.Post(ctx, "", "", Initialize(0, Version, elicit))
	if err != nil {
		return "", err
	}
	if r.Status != http.StatusOK || r.Session == "" {
		return "", &StatusError{Status: r.Status, Body: string(r.Body)}
	}
	sid := r.Session
	r, err = c.Post(ctx, sid, Version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return "", err
	}
	if r.Status != http.StatusAccepted {
		return "", &StatusError{Status: r.Status, Body: string(r.Body)}
	}
	return sid, nil
}

// StatusError is an answer other than the protocol's.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %.200s", e.Status, e.Body) }

// StatusOf is the HTTP status in err, 0 for a failure of the transport.
func StatusOf(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// Ping uses a session; the HTTP status.
func (c *Client) Ping(ctx context.Context, sid string) (int, error) {
	r, err := c.Post(ctx, sid, Version, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	return r.Status, err
}

// Batch sends one JSON-RPC batch of n initialize requests of the given
// protocol version, without a header naming a version (as the first
// request of a session goes).
func (c *Client) Batch(ctx context.Context, n int, version string) (Response, error) {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = Initialize(i+1, version, false)
	}
	return c.Post(ctx, "", "", "["+strings.Join(parts, ",")+"]")
}

// Flood is what opening sessions without end got.
type Flood struct {
	Opened  int
	Refused map[int]int // by HTTP status (0: the transport failed)
	Elapsed time.Duration
}

func (f Flood) String() string {
	return fmt.Sprintf("%d opened, refused %v, in %s", f.Opened, f.Refused, f.Elapsed.Round(time.Millisecond))
}

// FloodSessions opens n sessions over conc connections and ends none.
func (c *Client) FloodSessions(ctx context.Context, n, conc int) Flood {
	start := time.Now()
	f := Flood{Refused: map[int]int{}}
	var mu sync.Mutex
	work := make(chan struct{}, n)
	for range n {
		work <- struct{}{}
	}
	close(work)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for range work {
				_, err := c.Open(ctx, false)
				mu.Lock()
				if err == nil {
					f.Opened++
				} else {
					f.Refused[StatusOf(err)]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	f.Elapsed = time.Since(start)
	return f
}

// Form is a tool call waiting on a form that nobody answers: its request
// stays open until Hangup, or until slotd ends it.
type Form struct {
	resp   *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
	// Result is the call's result, when slotd answered it at once instead
	// of showing a form.
	Result json.RawMessage
}

// Waiting reports whether slotd showed the form (and so holds the call).
func (f *Form) Waiting() bool { return f.Result == nil }

// Hangup closes the call's connection, as a client that goes away does.
func (f *Form) Hangup() {
	f.cancel()
	if f.resp != nil {
		f.resp.Body.Close()
	}
}

// DisputeCall is a tools/call of the dispute example's tool with what a
// model sends first; slotd asks for the reason in a form.
func DisputeCall(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bank_open_dispute","arguments":{"card_last4":"•• 4417","operation_date":"вчера","amount":"1 200,50 ₽"}}}`, id)
}

// LeaveForm calls the dispute example's tool on a session opened with
// elicit and returns once slotd asks for a form (the call then waits) or
// answers the call.
func (c *Client) LeaveForm(ctx context.Context, sid string, id int) (*Form, error) {
	ctx, cancel := context.WithCancel(ctx)
	resp, err := c.post(ctx, sid, Version, DisputeCall(id))
	if err != nil {
		cancel()
		return nil, err
	}
	f := &Form{resp: resp, cancel: cancel, sc: bufio.NewScanner(resp.Body)}
	f.sc.Buffer(make([]byte, 64<<10), 1<<20)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		f.Hangup()
		return nil, &StatusError{Status: resp.StatusCode, Body: string(b)}
	}
	if err := f.next(true); err != nil {
		f.Hangup()
		return nil, err
	}
	return f, nil
}

// Wait reads the call's stream on until slotd answers the call (the form
// timed out, or was cancelled) and returns the result.
func (f *Form) Wait() (json.RawMessage, error) {
	if f.Result == nil {
		if err := f.next(false); err != nil {
			return nil, err
		}
	}
	return f.Result, nil
}

// next reads the call's stream up to a form (when form) or its result.
func (f *Form) next(form bool) error {
	for f.sc.Scan() {
		data, ok := bytes.CutPrefix(f.sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var msg struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		switch {
		case form && msg.Method == "elicitation/create":
			return nil
		case msg.Result != nil:
			f.Result = msg.Result
			f.Hangup()
			return nil
		}
	}
	return fmt.Errorf("the call's stream ended without a form or a result: %v", f.sc.Err())
}

// Turn times one turn of the gateway (POST /v1/turn) at base
// (http://host:port), the figure another tenant feels.
func (c *Client) Turn(ctx context.Context, base, conversation string) (time.Duration, int, error) {
	body := fmt.Sprintf(`{"conversation_id":%q,"tool":"bank.open_dispute","turn_id":"t-%d","arguments":{"card_last4":"•• 4417"}}`,
		conversation, time.Now().UnixNano())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/turn", strings.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	start := time.Now()
	resp, err := c.http().Do(req)
	if err != nil {
		return time.Since(start), 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return time.Since(start), resp.StatusCode, nil
}
