package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// sessions runs the operators' commands against a running slotd's
// AdminService: list, reset-stale, show, purge.
func sessions(ctx context.Context, args []string) error {
	return sessionsTo(ctx, os.Stdout, args)
}

func sessionsTo(ctx context.Context, w io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: slotd sessions list|reset-stale|show|purge [flags]")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("sessions "+sub, flag.ContinueOnError)
	addr := fs.String("addr", env("SLOTD_ADDR", "127.0.0.1:50051"), "slotd address (SLOTD_ADDR)")
	adminKey := fs.String("admin-key", "", "admin key; default SLOTD_ADMIN_KEY")
	asJSON := fs.Bool("json", false, "print JSON")
	dial := addDialFlags(fs)
	var (
		status, tool, tenant, conversation, sessionID string
		idle, ended                                   time.Duration
		limit                                         int
		dryRun                                        bool
	)
	switch sub {
	case "list":
		fs.StringVar(&status, "status", "", "active|completed|abandoned|expired|reset|cancelled")
		fs.StringVar(&tool, "tool", "", "only this tool")
		fs.StringVar(&tenant, "tenant", "", "only this tenant")
		fs.DurationVar(&idle, "idle", 0, "only sessions idle longer than this")
		fs.IntVar(&limit, "limit", 50, "page size")
	case "reset-stale":
		fs.DurationVar(&idle, "idle", 0, "reset active sessions idle longer than this (required)")
		fs.StringVar(&tool, "tool", "", "only this tool")
		fs.IntVar(&limit, "limit", 100, "at most this many in one batch")
		fs.BoolVar(&dryRun, "dry-run", false, "report, change nothing")
	case "show":
		fs.StringVar(&conversation, "conversation", "", "the conversation's active session")
		fs.StringVar(&sessionID, "session", "", "a session id")
		fs.StringVar(&tenant, "tenant", "", "the conversation's tenant")
	case "purge":
		fs.DurationVar(&ended, "ended", 0, "delete sessions ended longer ago than this (required)")
		fs.IntVar(&limit, "limit", 100, "at most this many in one batch")
		fs.BoolVar(&dryRun, "dry-run", false, "report, change nothing")
	default:
		return fmt.Errorf("unknown sessions command %q (list, reset-stale, show, purge)", sub)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *adminKey == "" {
		*adminKey = os.Getenv("SLOTD_ADMIN_KEY")
	}
	creds, err := dial.credentials()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(*addr, creds)
	if err != nil {
		return err
	}
	defer conn.Close()
	if *adminKey != "" {
		ctx = contextWithKey(ctx, *adminKey)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	admin := slotdv1.NewAdminServiceClient(conn)

	var resp proto.Message
	switch sub {
	case "list":
		req := &slotdv1.ListSessionsRequest{Tool: tool, Tenant: tenant, PageSize: int32(limit)}
		if status != "" {
			v, ok := slotdv1.SessionStatus_value["SESSION_STATUS_"+strings.ToUpper(status)]
			if !ok {
				return fmt.Errorf("unknown status %q", status)
			}
			req.Status = slotdv1.SessionStatus(v)
		}
		if idle > 0 {
			req.IdleLongerThan = durationpb.New(idle)
		}
		r, err := admin.ListSessions(ctx, req)
		if err != nil {
			return err
		}
		if !*asJSON {
			tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tTENANT\tCONVERSATION\tTOOL\tSTATUS\tVERSION\tUPDATED")
			for _, s := range r.Sessions {
				x := s.Session
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", x.Id, s.Tenant, x.ConversationId, x.Tool,
					strings.ToLower(strings.TrimPrefix(x.Status.String(), "SESSION_STATUS_")), x.Version,
					x.UpdatedAt.AsTime().Format(time.RFC3339))
			}
			if r.NextPageToken != "" {
				fmt.Fprintf(tw, "(more: next page after %s)\n", r.NextPageToken)
			}
			return tw.Flush()
		}
		resp = r
	case "reset-stale":
		if idle <= 0 {
			return errors.New("--idle is required")
		}
		r, err := admin.ResetStaleSessions(ctx, &slotdv1.ResetStaleSessionsRequest{
			IdleLongerThan: durationpb.New(idle), Tool: tool, DryRun: dryRun, Limit: int32(limit)})
		if err != nil {
			return err
		}
		if !*asJSON {
			verb := "reset"
			if dryRun {
				verb = "would reset"
			}
			fmt.Fprintf(w, "%s %d sessions\n", verb, len(r.SessionIds))
			for _, id := range r.SessionIds {
				fmt.Fprintln(w, id)
			}
			return nil
		}
		resp = r
	case "show":
		if conversation == "" && sessionID == "" {
			return errors.New("--conversation or --session is required")
		}
		r, err := admin.GetSessionHistory(ctx, &slotdv1.GetSessionHistoryRequest{
			ConversationId: conversation, SessionId: sessionID, Tenant: tenant})
		if err != nil {
			return err
		}
		resp = r
	case "purge":
		if ended <= 0 {
			return errors.New("--ended is required")
		}
		r, err := admin.PurgeSessions(ctx, &slotdv1.PurgeSessionsRequest{
			EndedLongerThan: durationpb.New(ended), DryRun: dryRun, Limit: int32(limit)})
		if err != nil {
			return err
		}
		if !*asJSON {
			verb := "purged"
			if dryRun {
				verb = "would purge"
			}
			fmt.Fprintf(w, "%s %d sessions\n", verb, len(r.SessionIds))
			return nil
		}
		resp = r
	}
	b, err := protojson.MarshalOptions{Multiline: true}.Marshal(resp)
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
