package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/slotd/slotd/internal/session/pgstore"
)

var contractVersions = &command{
	name:    "versions",
	summary: "list the contract versions replicas loaded, with the active sessions on each",
	about: `Reads contract_versions in the database at --database-url: every version of
every tool that a slotd replica loaded (a version is the hash of the
contract's canonical JSON), when and by which replica it was first and last
loaded, and how many active sessions run on it. A version with active
sessions must stay in the database until they end: a replica serves a
session pinned to a version it did not load from there.`,
	setup: func(fs *flags) runFunc {
		var url, tool string
		var asJSON bool
		databaseFlag(fs, &url)
		fs.String(&tool, "tool", "SLOTD_CONTRACT_TOOL", "", "only this tool's versions")
		fs.Bool(&asJSON, "json", "SLOTD_CONTRACT_JSON", false, "print JSON")
		return func(ctx context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			pool, err := openDatabase(ctx, url)
			if err != nil {
				return err
			}
			defer pool.Close()
			vs, err := pgstore.New(pool).ContractVersions(ctx, tool)
			if err != nil {
				return fmt.Errorf("cannot read the contract versions: %w", err)
			}
			if asJSON {
				type row struct {
					Tool        string    `json:"tool"`
					Version     string    `json:"version"`
					FirstSeen   time.Time `json:"first_seen"`
					Replica     string    `json:"replica"`
					LastSeen    time.Time `json:"last_seen"`
					LastReplica string    `json:"last_replica"`
					Active      int64     `json:"active_sessions"`
				}
				rows := make([]row, 0, len(vs))
				for _, v := range vs {
					rows = append(rows, row{v.Tool, v.Version, v.FirstSeen, v.Replica, v.LastSeen, v.LastReplica, v.Active})
				}
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tVERSION\tACTIVE\tFIRST SEEN\tBY\tLAST SEEN\tBY")
			for _, v := range vs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v.Tool, v.Version, v.Active,
					v.FirstSeen.UTC().Format(time.RFC3339), v.Replica, v.LastSeen.UTC().Format(time.RFC3339), v.LastReplica)
			}
			return tw.Flush()
		}
	},
}
