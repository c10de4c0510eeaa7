package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/slotd/slotd/contract"
	"github.com/slotd/slotd/internal/session"
	"github.com/slotd/slotd/internal/session/pgstore"
)

// replayConfig is the lifetimes and caps a replay plays with: serve's
// defaults, for contracts that set none.
var replayConfig = session.Config{StaleAfter: 30 * time.Minute, TTL: 24 * time.Hour}

var contractReplay = &command{
	name:    "replay",
	summary: "play stored conversations with the contracts of a folder and report what would change",
	about: `Reads the stored turns of real conversations from the database at
--database-url (the most recently used first, at most --limit; with --tool
only conversations with a session of that tool, with --since only those used
within that time) and plays each conversation twice through the planner, in
memory, writing nothing: with the contract versions its turns ran on, and
with the contracts of --contracts (the next version). It reports, per
conversation, each turn where the action, the question, the READY or CONFIRM
arguments or the idempotency key would differ, and a summary: conversations
reaching READY earlier, later or never (ready lost), slots newly asked,
values newly refused, conversations with masked values (a sensitive slot's,
a card number cut to four digits: played as absent) and conversations not
replayed (turns purged, a version no longer stored).

--fail-on takes a comma-separated list of conditions: any, differ,
ready-lost, ready-later, ready-args, newly-asked, newly-refused,
not-replayed. The command exits 1 when one holds, so that a pipeline can
gate a contract change on it.`,
	setup: func(fs *flags) runFunc {
		dir := addContractsFlag(fs)
		var url, tool, failOn string
		var since time.Duration
		var limit int
		var asJSON bool
		databaseFlag(fs, &url)
		fs.String(&tool, "tool", "SLOTD_CONTRACT_TOOL", "", "only this tool's versions (versions); only conversations with a session of this tool (replay)")
		fs.Duration(&since, "since", "SLOTD_CONTRACT_SINCE", 0, "only conversations used within this time, e.g. 24h (0: all)")
		fs.Int(&limit, "limit", "SLOTD_CONTRACT_LIMIT", session.DefaultReplayLimit, "at most this many conversations, the most recently used first")
		fs.Bool(&asJSON, "json", "SLOTD_CONTRACT_JSON", false, "print JSON")
		fs.String(&failOn, "fail-on", "SLOTD_CONTRACT_FAIL_ON", "", "exit 1 when one of these conditions holds: any, differ, ready-lost, ready-later, ready-args, newly-asked, newly-refused, not-replayed")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			conds, err := session.ParseFailOn(failOn)
			if err != nil {
				return usagef("--fail-on: %v", err)
			}
			if limit < 1 {
				return usagef("--limit must be at least 1")
			}
			if since < 0 {
				return usagef("--since must not be negative")
			}
			next, err := contract.LoadDir(*dir)
			if err != nil {
				return err
			}
			if tool != "" && next.Get(tool) == nil {
				return fmt.Errorf("no contract named %q in %s (have: %v)", tool, *dir, next.Names())
			}
			pool, err := openDatabase(ctx, url)
			if err != nil {
				return err
			}
			defer pool.Close()
			st := pgstore.New(pool)
			f := session.ReplayFilter{Tool: tool, Limit: limit}
			if since > 0 {
				f.Since = time.Now().Add(-since)
			}
			rep, err := session.NewReplayer(next, st, replayConfig).Run(ctx, st, f)
			if err != nil {
				return fmt.Errorf("cannot replay the stored conversations: %w", err)
			}
			failed := rep.Holding(conds)
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					*session.ReplayReport
					Failed []string `json:"failed"`
				}{rep, append([]string{}, failed...)}); err != nil {
					return err
				}
			} else if err := printReplay(c.stdout, rep); err != nil {
				return err
			}
			if len(failed) > 0 {
				return fmt.Errorf("--fail-on: %s", strings.Join(failed, ", "))
			}
			return nil
		}
	},
}

// printReplay writes a replay as people read it: each conversation that
// differs or was not replayed, its turns that differ, then the summary.
func printReplay(w io.Writer, rep *session.ReplayReport) error {
	for _, cr := range rep.Conversations {
		name := cr.ConversationID
		if cr.Tenant != "" {
			name = cr.Tenant + "/" + name
		}
		switch {
		case cr.NotReplayed != "":
			fmt.Fprintf(w, "%s: not replayed (%s): %s\n", name, cr.NotReplayed, cr.Detail)
			continue
		case !cr.Differs() && len(cr.Masked) == 0:
			continue
		}
		fmt.Fprintf(w, "%s (%s, %d turns)", name, strings.Join(cr.Tools, ", "), cr.Turns)
		if cr.Ready != session.ReadySame {
			fmt.Fprintf(w, ": READY %s (turn %s → %s)", cr.Ready, turnOrNever(cr.ReadyBefore), turnOrNever(cr.ReadyAfter))
		}
		fmt.Fprintln(w)
		if len(cr.Masked) > 0 {
			fmt.Fprintf(w, "  masked in the history, played as absent: %s\n", strings.Join(cr.Masked, ", "))
		}
		if len(cr.NewlyAsked) > 0 {
			fmt.Fprintf(w, "  newly asked: %s\n", strings.Join(cr.NewlyAsked, ", "))
		}
		if len(cr.NewlyRefused) > 0 {
			fmt.Fprintf(w, "  newly refused: %s\n", strings.Join(cr.NewlyRefused, ", "))
		}
		if cr.ReadyArguments {
			fmt.Fprintln(w, "  READY with other arguments")
		}
		for _, d := range cr.Diffs {
			fmt.Fprintf(w, "  turn %d (%s): %s → %s  [%s]\n", d.Turn, d.TurnID, stepLine(d.Before), stepLine(d.After), strings.Join(d.Fields, ", "))
		}
	}
	if len(rep.Conversations) > 0 {
		fmt.Fprintln(w)
	}
	s := rep.Summary
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rows := []struct {
		what string
		n    int
		more string
	}{
		{"conversations", s.Conversations, ""},
		{"replayed", s.Replayed, ""},
		{"unchanged", s.Same, ""},
		{"differ", s.Differ, ""},
		{"READY earlier", s.ReadyEarlier, ""},
		{"READY later", s.ReadyLater, ""},
		{"READY lost", s.ReadyLost, ""},
		{"READY with other arguments", s.ReadyArgs, ""},
		{"slots newly asked", s.NewlyAsked, counts(s.AskedSlots)},
		{"values newly refused", s.NewlyRefused, counts(s.RefusedSlots)},
		{"with masked values", s.Masked, ""},
		{"not replayed", s.NotReplayed, counts(s.NotReplayedWhy)},
	}
	fmt.Fprintln(tw, "CONVERSATIONS\tCOUNT\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.what, r.n, r.more)
	}
	return tw.Flush()
}

func turnOrNever(n int) string {
	if n == 0 {
		return "never"
	}
	return fmt.Sprint(n)
}

// stepLine is a play of a turn in a few words: its action and the slot
// asked, or the error.
func stepLine(s session.ReplayStep) string {
	switch {
	case s.Error != "":
		return "refused: " + s.Error
	case s.QuestionSlot != "":
		return s.Action + " " + s.QuestionSlot
	}
	return s.Action
}

// counts is "a 2, b 1", the largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
