// Package client is slotd's Go client for orchestrators: one Turn call per
// user turn, with a turn_id made once per logical turn and reused on every
// retry, retries only when slotd's problem says the failure is retryable,
// and answers as plain Go values rather than protobuf messages.
//
//	c, err := client.New("127.0.0.1:50051", client.WithAPIKey(key))
//	res, err := c.Turn(ctx, "chat-42", "bank.open_dispute", args)
//	switch res.Action {
//	case client.ActionAsk: // say res.Question.Text
//	case client.ActionReady: // call the backend with res.Arguments and res.IdempotencyKey
//	}
//
// A business outcome (a refused value, a REPAIR) is a normal result with
// Problem set; it is never retried, because the same arguments would get
// the same answer. A system failure is an *Error carrying slotd's Problem.
//
// This package is public: an orchestrator written in Go imports it. slotd's
// public Go packages are client, contract (with contract/normalizer and
// contract/provider), problem and the wire API in api/proto/slotd/v1;
// everything else is internal to the slotd binary and may change without
// notice.
package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// ReplayedHeader is the response header slotd sets to "true" on the stored
// response to a turn_id it has seen before.
const ReplayedHeader = "slotd-replayed"

// Client calls slotd. It is safe for concurrent use.
type Client struct {
	conn *grpc.ClientConn // nil when the caller owns the connection
	slot slotdv1.SlotServiceClient
	cfg  config
}

type config struct {
	apiKey   string
	creds    credentials.TransportCredentials
	dialOpts []grpc.DialOption
	retry    RetryPolicy
	locale   string
	timeZone string
	onRetry  func(Retry)
}

// Option configures a Client.
type Option func(*config)

// WithAPIKey sends "authorization: Bearer KEY" with every call: the tenant
// key of a server started with SLOTD_API_KEYS.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithTLS connects over TLS (slotd behind a TLS-terminating proxy); the
// default is plaintext, as slotd itself serves.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) { c.creds = credentials.NewTLS(cfg) }
}

// WithDialOptions adds gRPC dial options, e.g. interceptors for tracing.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dialOpts = append(c.dialOpts, opts...) }
}

// WithRetry replaces the retry policy; zero fields take DefaultRetryPolicy's.
func WithRetry(p RetryPolicy) Option { return func(c *config) { c.retry = p } }

// WithLocale is the locale of every turn that names none ("ru", "en").
func WithLocale(locale string) Option { return func(c *config) { c.locale = locale } }

// WithTimeZone is the IANA time zone of every turn that names none.
func WithTimeZone(tz string) Option { return func(c *config) { c.timeZone = tz } }

// OnRetry is called before each wait for a retry, e.g. to log it.
func OnRetry(f func(Retry)) Option { return func(c *config) { c.onRetry = f } }

// New connects to slotd at addr ("host:port"). The connection is made
// lazily; Close releases it.
func New(addr string, opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	creds := cfg.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	dial := append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, cfg.dialOpts...)
	conn, err := grpc.NewClient(addr, dial...)
	if err != nil {
		return nil, fmt.Errorf("slotd client: %w", err)
	}
	return &Client{conn: conn, slot: slotdv1.NewSlotServiceClient(conn), cfg: cfg}, nil
}

// NewFromConn uses a connection the caller made and keeps owning (Close
// does not close it). Dial options given as Options are ignored.
func NewFromConn(conn grpc.ClientConnInterface, opts ...Option) *Client {
	return &Client{slot: slotdv1.NewSlotServiceClient(conn), cfg: newConfig(opts)}
}

func newConfig(opts []Option) config {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	cfg.retry = cfg.retry.withDefaults()
	return cfg
}

// Close closes the connection New made.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Raw is the generated gRPC client, for calls this package does not wrap.
// It sends no API key by itself: add it to the context's metadata.
func (c *Client) Raw() slotdv1.SlotServiceClient { return c.slot }

func (c *Client) outgoing(ctx context.Context) context.Context {
	if c.cfg.apiKey == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.cfg.apiKey)
}

// TurnOption sets a field of one turn.
type TurnOption func(*slotdv1.TurnRequest)

// TurnID sets the turn_id instead of a new one. Derive it from the user's
// message (e.g. "chat-42/msg-17") when the orchestrator itself may crash and
// retry: the same turn_id is never applied twice.
func TurnID(id string) TurnOption { return func(r *slotdv1.TurnRequest) { r.TurnId = id } }

// Confirmation answers a RECONFIRM or CONFIRM: accept or decline.
func Confirmation(accept bool) TurnOption {
	return func(r *slotdv1.TurnRequest) { r.Confirmation = &slotdv1.Confirmation{Accept: accept} }
}

// Locale is this turn's locale.
func Locale(locale string) TurnOption { return func(r *slotdv1.TurnRequest) { r.Locale = locale } }

// TimeZone is this turn's IANA time zone ("Europe/Moscow"): relative dates
// ("вчера", "next Friday") resolve in it.
func TimeZone(tz string) TurnOption { return func(r *slotdv1.TurnRequest) { r.TimeZone = tz } }

// Now is the turn's clock, for replays and tests; server time by default.
func Now(t time.Time) TurnOption { return func(r *slotdv1.TurnRequest) { r.Now = timestamppb.New(t) } }

// Turn sends the arguments the model extracted this turn (nil for a turn
// that only answers a confirmation) and returns slotd's next step. It makes
// one turn_id and sends it on every attempt, so a retry after a lost
// response returns the stored response instead of applying the turn twice.
// It retries only failures whose problem says retryable, waiting what slotd
// asks (bounded by the policy, with jitter), and never past ctx's deadline.
func (c *Client) Turn(ctx context.Context, conversationID, tool string, args map[string]any, opts ...TurnOption) (*TurnResult, error) {
	req := &slotdv1.TurnRequest{ConversationId: conversationID, Tool: tool, Locale: c.cfg.locale, TimeZone: c.cfg.timeZone}
	if args != nil {
		s, err := structpb.NewStruct(args)
		if err != nil {
			return nil, fmt.Errorf("slotd client: arguments are not JSON values: %w", err)
		}
		req.Arguments = s
	}
	for _, o := range opts {
		o(req)
	}
	if req.TurnId == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("slotd client: turn id: %w", err)
		}
		req.TurnId = id.String()
	}
	var (
		resp   *slotdv1.TurnResponse
		header metadata.MD
	)
	attempts, err := c.call(ctx, func(ctx context.Context) error {
		header = nil
		var err error
		resp, err = c.slot.Turn(ctx, req, grpc.Header(&header))
		return err
	})
	if err != nil {
		return nil, err
	}
	res := turnResult(resp)
	res.Attempts = attempts
	if res.TurnID == "" {
		res.TurnID = req.TurnId
	}
	if v := header.Get(ReplayedHeader); len(v) > 0 && v[0] == "true" {
		res.Replayed = true
	}
	return res, nil
}

// ToolSchema returns a tool's input schema in the form the provider's strict
// mode accepts ("openai", "anthropic" or "plain"), to give to the model.
func (c *Client) ToolSchema(ctx context.Context, tool, provider string) (*ToolSchema, error) {
	var resp *slotdv1.GetToolSchemaResponse
	if _, err := c.call(ctx, func(ctx context.Context) (err error) {
		resp, err = c.slot.GetToolSchema(ctx, &slotdv1.GetToolSchemaRequest{Tool: tool, Provider: provider})
		return err
	}); err != nil {
		return nil, err
	}
	return &ToolSchema{Tool: tool, Name: resp.GetName(), Description: resp.GetDescription(), Parameters: resp.GetParameters().AsMap(),
		Provider: resp.GetProvider(), Version: resp.GetVersion()}, nil
}

// Session reads the conversation's open session of the tool, or its most
// recently used open session when no tool is given.
func (c *Client) Session(ctx context.Context, conversationID string, tool ...string) (*Session, error) {
	var resp *slotdv1.GetSessionResponse
	if _, err := c.call(ctx, func(ctx context.Context) (err error) {
		resp, err = c.slot.GetSession(ctx, &slotdv1.GetSessionRequest{ConversationId: conversationID, Tool: first(tool)})
		return err
	}); err != nil {
		return nil, err
	}
	return sessionOf(resp.GetSession()), nil
}

// Reset ends the conversation's open session of the tool, or every open
// session of the conversation when no tool is given; the next turn of each
// tool starts anew. It returns the sessions it ended.
func (c *Client) Reset(ctx context.Context, conversationID string, tool ...string) ([]Session, error) {
	var resp *slotdv1.ResetSessionResponse
	if _, err := c.call(ctx, func(ctx context.Context) (err error) {
		resp, err = c.slot.ResetSession(ctx, &slotdv1.ResetSessionRequest{ConversationId: conversationID, Tool: first(tool)})
		return err
	}); err != nil {
		return nil, err
	}
	var out []Session
	for _, s := range resp.GetSessions() {
		out = append(out, *sessionOf(s))
	}
	return out, nil
}

// first is the optional argument given, or "".
func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// Complete records the backend's result of the READY call made with
// idempotencyKey and returns what to put back into the model's context.
func (c *Client) Complete(ctx context.Context, conversationID, idempotencyKey string, result any) (*Completion, error) {
	v, err := structpb.NewValue(result)
	if err != nil {
		return nil, fmt.Errorf("slotd client: result is not a JSON value: %w", err)
	}
	return c.complete(ctx, &slotdv1.CompleteSessionRequest{ConversationId: conversationID, IdempotencyKey: idempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Result{Result: v}})
}

// CompleteFailed records that the backend call failed. The completion's
// Action says what next: READY (retry the backend with the same key) or
// HANDOFF (a person takes over).
func (c *Client) CompleteFailed(ctx context.Context, conversationID, idempotencyKey string, f Failure) (*Completion, error) {
	kind := slotdv1.FailureKind(slotdv1.FailureKind_value["FAILURE_KIND_"+string(f.Kind)])
	if kind == slotdv1.FailureKind_FAILURE_KIND_UNSPECIFIED {
		return nil, fmt.Errorf("slotd client: unknown failure kind %q", f.Kind)
	}
	return c.complete(ctx, &slotdv1.CompleteSessionRequest{ConversationId: conversationID, IdempotencyKey: idempotencyKey,
		Outcome: &slotdv1.CompleteSessionRequest_Failure{Failure: &slotdv1.BackendFailure{
			Kind: kind, HttpStatus: int32(f.HTTPStatus), RetryAfterSeconds: int32(f.RetryAfter.Seconds()),
		}}})
}

func (c *Client) complete(ctx context.Context, req *slotdv1.CompleteSessionRequest) (*Completion, error) {
	var resp *slotdv1.CompleteSessionResponse
	if _, err := c.call(ctx, func(ctx context.Context) (err error) {
		resp, err = c.slot.CompleteSession(ctx, req)
		return err
	}); err != nil {
		return nil, err
	}
	out := &Completion{Session: *sessionOf(resp.GetSession()), Action: actionOf(resp.GetAction()), Problem: problemOf(resp.GetProblem())}
	if resp.Output != nil {
		out.Output = resp.Output.AsMap()
	}
	return out, nil
}

// ProblemOf is the problem of a failed call: slotd's when it answered with
// one, nil for an error that did not come from a call.
func ProblemOf(err error) *Problem {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem
	}
	return nil
}
