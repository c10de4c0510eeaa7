package script

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// The syntax of a script's values, apart from YAML: durations, clocks, the
// names of enum values and gRPC codes, and the nearest name to a typo.

// parseDuration reads a Go duration with days allowed: 45m, 1h30m, 2d, 1d12h.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err == nil && n >= 0 {
			days = time.Duration(n) * 24 * time.Hour
			s = s[i+1:]
		}
	}
	var rest time.Duration
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration; write e.g. 45m, 1h30m, 2d or 1d12h", s)
		}
	}
	if v := days + rest; v > 0 {
		return v, nil
	}
	return 0, errors.New("must move the clock forward, e.g. 45m")
}

var clockLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parseClock reads a start clock: RFC 3339, or a local time in zone (UTC
// without one).
func parseClock(s, zone string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	loc := time.UTC
	if l, err := time.LoadLocation(zone); zone != "" && err == nil {
		loc = l
	}
	for _, layout := range clockLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseEnum reads ask, ASK or ACTION_ASK (case-insensitive) as the enum
// value; the UNSPECIFIED value is never a valid expectation.
func parseEnum(s, prefix string, values map[string]int32) (int32, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	u = strings.NewReplacer(" ", "_", "-", "_").Replace(u)
	if !strings.HasPrefix(u, prefix) {
		u = prefix + u
	}
	v, ok := values[u]
	return v, ok && v != 0
}

// enumNames lists an enum's values as scripts write them.
func enumNames(prefix string, values map[string]int32) string {
	type kv struct {
		name string
		v    int32
	}
	var all []kv
	for name, v := range values {
		if v != 0 {
			all = append(all, kv{strings.ToLower(strings.TrimPrefix(name, prefix)), v})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	names := make([]string, len(all))
	for i, x := range all {
		names[i] = x.name
	}
	return strings.Join(names, ", ")
}

// codeByName accepts InvalidArgument, INVALID_ARGUMENT, invalid_argument and
// invalid-argument.
var codeByName = func() map[string]codes.Code {
	m := map[string]codes.Code{}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		m[foldName(c.String())] = c
	}
	return m
}()

func foldName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
}

// suggest returns the known name closest to s when it is close enough to be
// a typo.
func suggest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := levenshtein(strings.ToLower(s), k); dist < bestD {
			best, bestD = k, dist
		}
	}
	if bestD > len(s)/2 {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
