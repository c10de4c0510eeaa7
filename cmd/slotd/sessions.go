package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// sessionsCommands are the subcommands of slotd sessions, in the order its
// usage lists them. Each is a *command whose setup declares its flags
// beside addAdminFlags' and whose work calls connect; a new one is added
// to this list.
var sessionsCommands = []*command{sessionsList, sessionsResetStale, sessionsShow, sessionsPurge, sessionsErase}

var sessionsCommand = &command{
	name:    "sessions",
	summary: "list, reset-stale, show, purge and erase sessions of a running slotd",
	about: `Operators' commands against a running slotd's AdminService, with an admin
key (--admin-key, SLOTD_ADMIN_KEY) when the server has keys.`,
	subs: sessionsCommands,
}

var sessionsList = &command{
	name:    "list",
	summary: "list sessions by status, tool, tenant and idle time",
	setup: func(fs *flags) runFunc {
		a := addAdminFlags(fs)
		var status, tool, tenant, prefix, page string
		var idle time.Duration
		var limit int
		fs.String(&status, "status", "SLOTD_SESSIONS_STATUS", "", "only sessions in this status: active, completed, abandoned, expired, reset or cancelled")
		fs.String(&tool, "tool", "SLOTD_SESSIONS_TOOL", "", "only sessions of this tool")
		fs.String(&tenant, "tenant", "SLOTD_SESSIONS_TENANT", "", "only sessions of this tenant")
		fs.String(&prefix, "prefix", "SLOTD_SESSIONS_PREFIX", "", "only sessions whose conversation id starts with this (taken literally)")
		fs.String(&page, "page", "SLOTD_SESSIONS_PAGE", "", "the page after this token (a previous listing's next page token)")
		fs.Duration(&idle, "idle", "SLOTD_SESSIONS_IDLE", 0, "only sessions idle longer than this")
		fs.Int(&limit, "limit", "SLOTD_SESSIONS_LIMIT", 50, "page size")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			req := &slotdv1.ListSessionsRequest{Tool: tool, Tenant: tenant, ConversationPrefix: prefix, PageToken: page, PageSize: int32(limit)}
			if status != "" {
				v, ok := slotdv1.SessionStatus_value["SESSION_STATUS_"+strings.ToUpper(status)]
				if !ok {
					return usagef("--status %q: one of active, completed, abandoned, expired, reset, cancelled", status)
				}
				req.Status = slotdv1.SessionStatus(v)
			}
			if idle > 0 {
				req.IdleLongerThan = durationpb.New(idle)
			}
			ctx, admin, done, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer done()
			r, err := admin.ListSessions(ctx, req)
			if err != nil {
				return a.callError(err)
			}
			if a.json {
				return printJSON(c.stdout, r)
			}
			return printSessions(c.stdout, r)
		}
	},
}

func printSessions(w io.Writer, r *slotdv1.ListSessionsResponse) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tTENANT\tCONVERSATION\tTOOL\tSTATUS\tVERSION\tUPDATED")
	for _, s := range r.Sessions {
		x := s.Session
		tenant := s.Tenant
		if tenant == "" {
			tenant = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", x.Id, tenant, x.ConversationId, x.Tool,
			strings.ToLower(strings.TrimPrefix(x.Status.String(), "SESSION_STATUS_")), x.Version,
			x.UpdatedAt.AsTime().Format(time.RFC3339))
	}
	if r.NextPageToken != "" {
		fmt.Fprintf(tw, "(more: --page %s)\n", r.NextPageToken)
	}
	return tw.Flush()
}

var sessionsResetStale = &command{
	name:    "reset-stale",
	summary: "reset active sessions idle longer than --idle, in one bounded batch",
	setup: func(fs *flags) runFunc {
		a := addAdminFlags(fs)
		var tool string
		var idle time.Duration
		var limit int
		var dryRun bool
		fs.Duration(&idle, "idle", "SLOTD_SESSIONS_IDLE", 0, "reset active sessions idle longer than this (required)")
		fs.String(&tool, "tool", "SLOTD_SESSIONS_TOOL", "", "only sessions of this tool")
		fs.Int(&limit, "limit", "SLOTD_SESSIONS_LIMIT", 100, "at most this many in one batch")
		fs.Bool(&dryRun, "dry-run", "SLOTD_SESSIONS_DRY_RUN", false, "report what would be reset, change nothing")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if idle <= 0 {
				return usagef("--idle is required, e.g. --idle 24h")
			}
			ctx, admin, done, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer done()
			r, err := admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{
				IdleLongerThan: durationpb.New(idle), Tool: tool, DryRun: dryRun, Limit: int32(limit)})
			if err != nil {
				return a.callError(err)
			}
			if a.json {
				return printJSON(c.stdout, r)
			}
			fmt.Fprintf(c.stdout, "%s %d sessions\n", map[bool]string{false: "reset", true: "would reset"}[dryRun], len(r.SessionIds))
			for _, id := range r.SessionIds {
				fmt.Fprintln(c.stdout, id)
			}
			return nil
		}
	},
}

var sessionsShow = &command{
	name:    "show",
	summary: "print a session's turns and slot changes (its history)",
	about: `Prints a session's turns and slot changes as JSON: the session given by
--session, or the conversation's open session (of --tool), else its latest.
Without --tenant the session is looked for under the one tenant that holds
it; a conversation several tenants hold needs --tenant.`,
	setup: func(fs *flags) runFunc {
		a := addAdminFlags(fs)
		var conversation, sessionID, tenant, tool string
		fs.String(&conversation, "conversation", "SLOTD_SESSIONS_CONVERSATION", "", "the conversation id")
		fs.String(&sessionID, "session", "SLOTD_SESSIONS_SESSION", "", "a session id")
		fs.String(&tenant, "tenant", "SLOTD_SESSIONS_TENANT", "", "the tenant that holds it; needed only when several do")
		fs.String(&tool, "tool", "SLOTD_SESSIONS_TOOL", "", "with --conversation: the conversation's open session of this tool")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if conversation == "" && sessionID == "" {
				return usagef("--conversation or --session is required")
			}
			ctx, admin, done, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer done()
			r, err := admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{
				ConversationId: conversation, SessionId: sessionID, Tenant: tenant, Tool: tool})
			if codeOf(err) == codes.InvalidArgument && pointsAt(err, "tenant") {
				return errors.New(describe(err) + " with --tenant")
			}
			if err != nil {
				return a.callError(err)
			}
			return printJSON(c.stdout, r)
		}
	},
}

var sessionsPurge = &command{
	name:    "purge",
	summary: "delete sessions ended longer ago than --ended, with their history",
	setup: func(fs *flags) runFunc {
		a := addAdminFlags(fs)
		var ended time.Duration
		var limit int
		var dryRun bool
		fs.Duration(&ended, "ended", "SLOTD_SESSIONS_ENDED", 0, "delete sessions ended longer ago than this (required)")
		fs.Int(&limit, "limit", "SLOTD_SESSIONS_LIMIT", 100, "at most this many in one batch")
		fs.Bool(&dryRun, "dry-run", "SLOTD_SESSIONS_DRY_RUN", false, "report what would be purged, change nothing")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if ended <= 0 {
				return usagef("--ended is required, e.g. --ended 720h")
			}
			ctx, admin, done, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer done()
			r, err := admin.PurgeSessions(ctx, &slotdv1.PurgeSessionsRequest{
				EndedLongerThan: durationpb.New(ended), DryRun: dryRun, Limit: int32(limit)})
			if err != nil {
				return a.callError(err)
			}
			if a.json {
				return printJSON(c.stdout, r)
			}
			_, err = fmt.Fprintf(c.stdout, "%s %d sessions\n", map[bool]string{false: "purged", true: "would purge"}[dryRun], len(r.SessionIds))
			return err
		}
	},
}

var sessionsErase = &command{
	name:    "erase",
	summary: "remove every row that holds a conversation, and record the erasure",
	about: `Removes every session, turn and slot change of the conversation --conversation
of --tenant in one transaction, and records the erasure under the tenant by a
hash of the conversation id, with the time and the admin key's name. Without
--tenant it is the default tenant's conversation (a server without API keys),
never any tenant's. A conversation slotd holds nothing of is no error: the
erasure is recorded, and the command says nothing was found.`,
	setup: func(fs *flags) runFunc {
		a := addAdminFlags(fs)
		var conversation, tenant string
		fs.String(&conversation, "conversation", "SLOTD_SESSIONS_CONVERSATION", "", "the conversation id (required)")
		fs.String(&tenant, "tenant", "SLOTD_SESSIONS_TENANT", "", "the tenant that holds it; empty is the default tenant")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if conversation == "" {
				return usagef("--conversation is required")
			}
			ctx, admin, done, err := a.connect(ctx)
			if err != nil {
				return err
			}
			defer done()
			r, err := admin.EraseConversation(ctx, &slotdv1.EraseConversationRequest{Tenant: tenant, ConversationId: conversation})
			if err != nil {
				return a.callError(err)
			}
			if a.json {
				return printJSON(c.stdout, r)
			}
			what := fmt.Sprintf("erased %d sessions", r.SessionsErased)
			if !r.Found {
				what = "found nothing to erase"
			}
			_, err = fmt.Fprintf(c.stdout, "%s; recorded as %s by %s\n", what, r.ConversationHash, r.ErasedBy)
			return err
		}
	},
}

// adminFlags are how a sessions command reaches AdminService.
type adminFlags struct {
	addr, key string
	json      bool
	dial      *dialFlags
}

// addAdminFlags declares the flags every sessions command shares.
func addAdminFlags(fs *flags) *adminFlags {
	a := &adminFlags{}
	fs.String(&a.addr, "addr", "SLOTD_ADDR", "127.0.0.1:50051", "slotd's gRPC address")
	fs.String(&a.key, "admin-key", "SLOTD_ADMIN_KEY", "", "admin key, one of the server's SLOTD_ADMIN_KEYS; none for a server without keys")
	fs.Bool(&a.json, "json", "SLOTD_SESSIONS_JSON", false, "print the response as JSON")
	a.dial = addDialFlags(fs)
	return a
}

// connect dials slotd. Calls made with the context it returns carry the
// admin key and end within 30 seconds; done closes the connection.
func (a *adminFlags) connect(ctx context.Context) (context.Context, slotdv1.AdminServiceClient, func(), error) {
	creds, err := a.dial.credentials()
	if err != nil {
		return nil, nil, nil, err
	}
	conn, err := grpc.NewClient(a.addr, creds)
	if err != nil {
		return nil, nil, nil, usagef("--addr %q: %v", a.addr, err)
	}
	if a.key != "" {
		ctx = contextWithKey(ctx, a.key)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	return ctx, slotdv1.NewAdminServiceClient(conn), func() { cancel(); conn.Close() }, nil
}

// callError says what went wrong with a call, with what to do about it.
func (a *adminFlags) callError(err error) error {
	msg := describe(err)
	switch codeOf(err) {
	case codes.Unavailable:
		msg = "cannot reach slotd at " + a.addr + ": " + msg
	case codes.Unauthenticated:
		msg += " (give --admin-key or set SLOTD_ADMIN_KEY)"
	case codes.PermissionDenied:
		msg += " (--admin-key must be one of the server's SLOTD_ADMIN_KEYS)"
	}
	return errors.New(msg)
}

func printJSON(w io.Writer, m proto.Message) error {
	b, err := protojson.MarshalOptions{Multiline: true}.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// contextWithKey sends key as the bearer key of every call made with ctx.
func contextWithKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}
