package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The values of a script, apart from YAML: text as written, durations, yes
// and no, enum names, gRPC codes, JSON values; and the nearest name to a
// typo.

// val is a value as a script writes it, and where: the fields of format.go
// that hold one value are val[T], which the library decodes by calling
// UnmarshalYAML, and read reads the value by its type T.
type val[T any] struct {
	v   T
	pos Pos
}

func (w *val[T]) UnmarshalYAML(unmarshal func(any) error) error {
	w.pos = posOf(nodeOf(unmarshal))
	return read(unmarshal, &w.v)
}

// The values whose syntax is not their Go type's.
type (
	nonEmpty  string   // text that is not blank
	timeZone  string   // an IANA time zone
	yesNo     bool     // the user's answer: yes or no, accept or decline
	texts     []string // a list of text
	oneOrMore []string // texts, or one text for a list of one
	resetFlag struct{} // reset: true, or no value
)

// read decodes the value an unmarshaler is given into dst. Text is read as
// written (1200.50 stays "1200.50", 0417 "0417"); the numbers of JSON
// values are float64, as in JSON.
func read(unmarshal func(any) error, dst any) error {
	n := nodeOf(unmarshal)
	s, scalar := scalarText(n)
	fail := func(format string, args ...any) error { return mistake(n, format, args...) }
	switch dst.(type) {
	case *string, *nonEmpty, *timeZone, *time.Duration, *codes.Code, protoreflect.Enum:
		if !scalar {
			return fail("expected text, got %s", kindOf(n))
		}
	}
	switch p := dst.(type) {
	case *string:
		*p = s
	case *nonEmpty:
		if *p = nonEmpty(s); strings.TrimSpace(s) == "" {
			return fail("must not be empty")
		}
	case *timeZone:
		if _, err := time.LoadLocation(s); err != nil || strings.TrimSpace(s) == "" {
			return fail("%q is not an IANA time zone such as Europe/Moscow", s)
		}
		*p = timeZone(s)
	case *time.Duration:
		d, err := parseDuration(s)
		if err != nil {
			return fail("%v", err)
		}
		*p = d
	case *yesNo:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "yes", "true", "accept", "y":
			*p = true
		case "no", "false", "decline", "n":
			*p = false
		default:
			return fail("expected yes or no (accept or decline)")
		}
	case *bool:
		switch strings.ToLower(s) {
		case "yes", "true":
			*p = true
		case "no", "false":
			*p = false
		default:
			return fail("expected true or false (yes or no)")
		}
	case *resetFlag:
		var b bool
		if isNull(n) {
			return nil
		} else if err := read(unmarshal, &b); err != nil {
			return err
		} else if !b {
			return fail("reset: false does nothing; remove it")
		}
	case *int64, *int32:
		if _, ok := bare(n).(*ast.IntegerNode); !ok || unmarshal(p) != nil {
			return fail("expected a whole number")
		}
	case *any:
		if err := unmarshal(p); err != nil {
			return err
		}
		// Through JSON, so that numbers are float64 and .inf and .nan refused.
		b, err := json.Marshal(*p)
		if err == nil {
			err = json.Unmarshal(b, p)
		}
		if err != nil {
			return fail("not a JSON value: %v", err)
		}
	case *map[string]any: // args, the model's tool-call arguments
		if _, ok := bare(n).(ast.MapNode); !ok && !isNull(n) {
			return fail("expected a mapping of argument names to values (the model's tool-call arguments), got %s", kindOf(n))
		}
		var v any
		err := read(unmarshal, &v)
		*p, _ = v.(map[string]any)
		return err
	case *texts:
		var items []val[string]
		err := listOf(unmarshal, &items, "expected a list, e.g. [a, b]; [] for none")
		*p = texts{}
		for _, t := range items {
			*p = append(*p, t.v)
		}
		return err
	case *oneOrMore:
		switch {
		case scalar:
			*p = oneOrMore{s}
		case isList(n):
			return read(unmarshal, (*texts)(p))
		default:
			return fail("expected text or a list of text")
		}
	case *codes.Code:
		if *p = codeByName[foldName(s)]; *p == codes.OK {
			return fail("unknown gRPC code %q; e.g. InvalidArgument, NotFound, FailedPrecondition, Unimplemented", s)
		}
	case protoreflect.Enum:
		d := p.Descriptor()
		v, ok := parseEnum(s, d)
		if !ok {
			what := strings.ReplaceAll(strings.ToLower(strings.TrimSuffix(enumPrefix(d), "_")), "_", " ")
			return fail("unknown %s %q; one of %s", what, s, enumNames(d))
		}
		reflect.ValueOf(p).Elem().SetInt(int64(v))
	default:
		panic(fmt.Sprintf("script: no reader for %T", dst))
	}
	return nil
}

// parseDuration reads a Go duration with days allowed: 45m, 1h30m, 2d, 1d12h.
func parseDuration(s string) (time.Duration, error) {
	rest, d := strings.TrimSpace(s), time.Duration(0)
	if days, after, ok := strings.Cut(rest, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			rest, d = after, time.Duration(n)*24*time.Hour
		}
	}
	if rest != "" {
		x, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration; write e.g. 45m, 1h30m, 2d or 1d12h", rest)
		}
		d += x
	}
	if d <= 0 {
		return 0, errors.New("must move the clock forward, e.g. 45m")
	}
	return d, nil
}

// parseClock reads a start clock: RFC 3339, or a local time in zone (UTC
// without one).
func parseClock(s, zone string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseEnum reads ask, ASK or ACTION_ASK (any case, with - or a space for
// _) as a value of the enum d; the UNSPECIFIED value is never a valid
// expectation.
func parseEnum(s string, d protoreflect.EnumDescriptor) (protoreflect.EnumNumber, bool) {
	u := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToUpper(strings.TrimSpace(s)))
	v := d.Values().ByName(protoreflect.Name(enumPrefix(d) + strings.TrimPrefix(u, enumPrefix(d))))
	if v == nil || v.Number() == 0 {
		return 0, false
	}
	return v.Number(), true
}

// enumPrefix is the prefix of an enum's value names, e.g. ACTION_.
func enumPrefix(d protoreflect.EnumDescriptor) string {
	return strings.TrimSuffix(string(d.Values().ByNumber(0).Name()), "UNSPECIFIED")
}

// enumNames lists an enum's values as scripts write them.
func enumNames(d protoreflect.EnumDescriptor) string {
	var names []string
	for i := 1; i < d.Values().Len(); i++ {
		names = append(names, strings.ToLower(strings.TrimPrefix(string(d.Values().Get(i).Name()), enumPrefix(d))))
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
	best, bestD := "", min(3, len(s)/2+1)
	for _, k := range known {
		if d := levenshtein([]rune(strings.ToLower(s)), []rune(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func levenshtein(a, b []rune) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := range a {
		cur[0] = i + 1
		for j := range b {
			cost := 1
			if a[i] == b[j] {
				cost = 0
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
