package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the report for a person.
func (r *Report) WriteTable(w io.Writer) error {
	c := r.Config
	run := c.Duration.String() + " per side"
	if c.Turns > 0 {
		run = fmt.Sprintf("%d turns per side", c.Turns)
	}
	if c.Rounds > 1 {
		run += fmt.Sprintf(" in %d rounds, alternating", c.Rounds)
	} else {
		run += " in 1 round"
	}
	if c.Rate > 0 {
		run += fmt.Sprintf(", paced at %d turns/s", c.Rate)
	} else {
		run += ", unpaced (saturation)"
	}
	fmt.Fprintf(w, "slotd bench: %d concurrent conversations, %s, slotd %s, pools of %d Postgres connections\n",
		c.Conversations, run, r.Mode, r.PoolMax)
	if c.Via != "" {
		fmt.Fprintf(w, "slotd connects through the pooler at %s (--via); the direct side straight to Postgres\n", hostOf(c.Via))
	}
	if r.PoolNote != "" {
		fmt.Fprintln(w, r.PoolNote)
	}
	fmt.Fprintf(w, "dialogues: %s; %d sessions stored at the start (preloaded %d)\n\n",
		strings.Join(r.Dialogue, ", "), r.Sessions, c.Preload)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tturns\tturns/s\tp50\tp95\tp99\tmax\terrors\t")
	for _, row := range []struct {
		name string
		s    Side
	}{{"slotd (" + transportName(c.Transport) + ")", r.Slotd}, {"direct (pgx)", r.Direct}} {
		s := row.s
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\t\n", row.name, s.Turns, s.TurnsPerSec,
			ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max), s.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nratio slotd/direct: %.2f\n", r.Ratio)
	if len(r.Rounds) > 1 {
		fmt.Fprint(w, "rounds:")
		for _, x := range r.Rounds {
			fmt.Fprintf(w, " %.2f", x.Ratio())
		}
		fmt.Fprintln(w)
	}
	if c := r.Slotd.CPU; c.Bench > 0 || c.Postgres > 0 {
		what := "bench process (client and slotd)"
		if r.Mode != "in-process" {
			what = "bench process (client)"
		}
		fmt.Fprintf(w, "CPU per turn, slotd side: %s %s", what, us(c.Bench))
		if c.Slotd > 0 {
			fmt.Fprintf(w, ", slotd %s", us(c.Slotd))
		}
		fmt.Fprintf(w, ", postgres %s\n", us(c.Postgres))
		d := r.Direct.CPU
		fmt.Fprintf(w, "CPU per turn, direct side: bench process (pgx) %s, postgres %s\n", us(d.Bench), us(d.Postgres))
		fmt.Fprintf(w, "other work on the machine: %.0f%% of its CPU during the slotd side, %.0f%% during the direct side\n",
			100*c.Others, 100*d.Others)
	}
	if r.Updates.Known {
		note := ""
		if r.Mode != "in-process" {
			note = " (slotd's connections stay open: its last second's updates may be missing)"
		}
		fmt.Fprintf(w, "HOT updates of sessions (no index written): %s, both sides%s\n", hot(r.Updates), note)
	}
	if r.Slotd.Early > 0 {
		fmt.Fprintf(w, "median turn, first vs last tenth of each conversation: slotd %s vs %s, direct %s vs %s\n",
			ms(r.Slotd.Early), ms(r.Slotd.Late), ms(r.Direct.Early), ms(r.Direct.Late))
	}
	if r.RSS > 0 {
		fmt.Fprintf(w, "RSS: %.0f MB (%s)\n", float64(r.RSS)/(1<<20), r.RSSWhat)
	} else if r.RSSWhat != "" {
		fmt.Fprintf(w, "RSS: %s\n", r.RSSWhat)
	}
	for _, row := range []struct {
		name string
		s    Side
	}{{"slotd", r.Slotd}, {"direct", r.Direct}} {
		if row.s.FirstError != "" {
			fmt.Fprintf(w, "first %s error: %s\n", row.name, row.s.FirstError)
		}
	}
	return nil
}

func hot(u Updates) string {
	if !u.Known {
		return "unknown"
	}
	if u.All == 0 {
		return "no updates"
	}
	return fmt.Sprintf("%.0f%% of %d", 100*u.Share(), u.All)
}

func us(d time.Duration) string { return fmt.Sprintf("%d µs", d.Microseconds()) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

type sideJSON struct {
	Turns       int64   `json:"turns"`
	Errors      int64   `json:"errors"`
	Seconds     float64 `json:"seconds"`
	TurnsPerSec float64 `json:"turns_per_s"`
	P50         float64 `json:"p50_ms"`
	P95         float64 `json:"p95_ms"`
	P99         float64 `json:"p99_ms"`
	Max         float64 `json:"max_ms"`
	Early       float64 `json:"first_tenth_p50_ms,omitempty"`
	Late        float64 `json:"last_tenth_p50_ms,omitempty"`
	FirstError  string  `json:"first_error,omitempty"`
	CPU         struct {
		Bench    int64 `json:"bench_us"`
		Slotd    int64 `json:"slotd_us,omitempty"`
		Postgres int64 `json:"postgres_us"`
	} `json:"cpu_per_turn"`
	Others float64 `json:"other_load"`
}

func sideOf(s Side) sideJSON {
	f := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out := sideJSON{Turns: s.Turns, Errors: s.Errors, Seconds: s.Elapsed.Seconds(), TurnsPerSec: s.TurnsPerSec,
		P50: f(s.P50), P95: f(s.P95), P99: f(s.P99), Max: f(s.Max), Early: f(s.Early), Late: f(s.Late), FirstError: s.FirstError}
	out.CPU.Bench, out.CPU.Slotd, out.CPU.Postgres = s.CPU.Bench.Microseconds(), s.CPU.Slotd.Microseconds(), s.CPU.Postgres.Microseconds()
	out.Others = s.CPU.Others
	return out
}

type roundJSON struct {
	Slotd  float64 `json:"slotd_turns_per_s"`
	Direct float64 `json:"direct_turns_per_s"`
	Ratio  float64 `json:"ratio"`
}

// WriteJSON prints the report as one JSON line for machines.
func (r *Report) WriteJSON(w io.Writer) error {
	rounds := []roundJSON{}
	for _, x := range r.Rounds {
		rounds = append(rounds, roundJSON{Slotd: x.SlotdTurnsPerSec, Direct: x.DirectTurnsPerSec, Ratio: x.Ratio()})
	}
	return json.NewEncoder(w).Encode(struct {
		Transport         string      `json:"transport"`
		Conversations     int         `json:"conversations"`
		DurationSeconds   float64     `json:"duration_s,omitempty"`
		Turns             int         `json:"turns,omitempty"`
		ConversationTurns int         `json:"conversation_turns,omitempty"`
		Preload           int         `json:"preload"`
		Sessions          int64       `json:"sessions_at_start"`
		Mode              string      `json:"slotd"`
		PoolMaxConns      int32       `json:"pool_max_conns"`
		Dialogues         []string    `json:"dialogues"`
		Slotd             sideJSON    `json:"slotd_side"`
		Direct            sideJSON    `json:"direct_side"`
		Ratio             float64     `json:"ratio"`
		Rounds            []roundJSON `json:"rounds"`
		SessionUpdates    int64       `json:"session_updates"`
		HOTUpdates        int64       `json:"session_hot_updates"`
		HOTShare          float64     `json:"session_hot_share"`
		RSSBytes          int64       `json:"rss_bytes,omitempty"`
	}{
		Transport: r.Config.Transport, Conversations: r.Config.Conversations, DurationSeconds: r.Config.Duration.Seconds(), Turns: r.Config.Turns,
		ConversationTurns: r.Config.ConversationTurns, Preload: r.Config.Preload, Sessions: r.Sessions, Mode: r.Mode,
		PoolMaxConns: r.PoolMax, Dialogues: r.Dialogue, Slotd: sideOf(r.Slotd), Direct: sideOf(r.Direct),
		Ratio: r.Ratio, Rounds: rounds, SessionUpdates: r.Updates.All, HOTUpdates: r.Updates.HOT,
		HOTShare: r.Updates.Share(), RSSBytes: r.RSS,
	})
}

// hostOf is a URL's address, without its user or password.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Host
}
