package normalizer

import (
	"regexp"
	"strings"
	"time"
)

// Dates in ru, uk and en, resolved against the turn's clock in its zone.
// The conventions (docs/contracts.md):
//   - "next <weekday>" is the first such day after today; "last <weekday>"
//     the last one before today;
//   - "<weekday> next week" is that day of the next Monday-based week
//     ("<weekday> last week": of the previous one);
//   - "this <weekday>" is that day of the current week, which is on or after
//     today unless the day has passed;
//   - a bare weekday ("в пятницу", "on Friday") is the nearest such day on
//     or after today, or on or before today for a past-only date;
//   - a bare day of month ("the 10th", "10-го") is in the current month
//     unless already past, then in the next (for a past-only date: unless
//     still ahead, then in the previous);
//   - a day and month without a year ("15.12", "15 December") is in the
//     current year; for a past-only date (x-slotd.date_range: past) the last
//     such day on or before today, for a future-only one the first on or
//     after today;
//   - "in N days", "через N дней", "N днів тому" and the same in weeks
//     count from today, up to maxRelativeDays either way;
//   - a time of day with a day ("today at 17:30", "сегодня вечером",
//     "сьогодні о 5", "later today") only says which day; the slot keeps
//     the date, and "tonight" or "this evening" said after midnight is the
//     day that has just begun, as "today" is;
//   - an impossible date ("31.02") is refused, never rolled over; an
//     American month-first date ("08/22/2026") is not guessed.

// relativeDays are the words for a day relative to today.
var relativeDays = map[string]int{
	"сегодня": 0, "вчера": -1, "позавчера": -2, "завтра": 1, "послезавтра": 2,
	"сьогодні": 0, "вчора": -1, "позавчора": -2, "післязавтра": 2, "позаучора": -2,
	"today": 0, "yesterday": -1, "tomorrow": 1, "the day before yesterday": -2, "the day after tomorrow": 2,
	"day before yesterday": -2, "day after tomorrow": 2, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
	"yesterday morning": -1, "yesterday evening": -1, "yesterday afternoon": -1, "last night": -1,
	"сегодня утром": 0, "вчера вечером": -1, "вчера утром": -1, "вчера днем": -1, "вчора ввечері": -1, "вчора вранці": -1,
}

var (
	isoDate = regexp.MustCompile(`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:t.*|\s+\d.*)?$`)
	dmyDate = regexp.MustCompile(`^(\d{1,2})[./-](\d{1,2})(?:[./-](\d{4}|\d{2}))?(?:\s*(?:г|года|год|р|року|рік)\.?)?$`)
	dayTok  = regexp.MustCompile(`^(\d{1,2})(st|nd|rd|th|-?го|-?е|-?ое|-?ого|-?те|-?ге|-?й|-?ий|-?ре)?$`)
)

// The sides of today a date may be restricted to (x-slotd.date_range).
const (
	Past   = "past"
	Future = "future"
)

const (
	// maxRelativeDays bounds "in N days" and "N weeks ago" to a leap year:
	// further out, a count of days is more likely a slip than a plan.
	maxRelativeDays = 366
	// maxDateWords bounds the words of a date with a time of day, which
	// parseDayAtTime splits at every word; no real date takes more.
	maxDateWords = 12
)

// DateOptions are what a date depends on besides its text.
type DateOptions struct {
	// Now is the turn's clock (the wall clock when zero), and Location the
	// zone whose calendar day is today (UTC when nil).
	Now      time.Time
	Location *time.Location
	// Range is Past or Future when only such dates make sense: "15.12" then
	// resolves to that side of today, and a date on the other side is
	// refused. Empty allows both.
	Range string
}

// today is the turn's calendar day in its zone, as a UTC midnight so that
// date arithmetic never meets a DST jump.
func (o DateOptions) today() time.Time {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Date reads a date as models send it and returns it as YYYY-MM-DD.
func Date(v any, o DateOptions) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", refuse("date.not_text")
	}
	today := o.today()
	d, err := parseDate(s, today, o.Range)
	if err != nil {
		return "", err
	}
	switch {
	case o.Range == Past && d.After(today):
		return "", refuse("date.future", Args{"day": today.Format(time.DateOnly)})
	case o.Range == Future && d.Before(today):
		return "", refuse("date.past", Args{"day": today.Format(time.DateOnly)})
	}
	return d.Format(time.DateOnly), nil
}

// dateKey lower-cases, unifies apostrophes and ё, and trims the marks a
// sentence leaves around a date.
func dateKey(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "’ʼ`ё") {
		s = strings.NewReplacer("’", "'", "ʼ", "'", "`", "'", "ё", "е").Replace(s)
	}
	return strings.Trim(s, " .!?,;:\"«»")
}

// parseDate reads a date, or a date with a time of day that only says
// which day it is ("today at 17:30", "later today").
func parseDate(s string, today time.Time, rng string) (time.Time, error) {
	key := dateKey(s)
	d, err := parseDay(key, today, rng)
	if !isNotDate(err) {
		return d, err
	}
	return parseDayAtTime(key, today, rng)
}

func isNotDate(err error) bool {
	r, ok := err.(*Refusal)
	return ok && r.Key == "date.not_date"
}

// parseDay reads a date written on its own.
func parseDay(key string, today time.Time, rng string) (time.Time, error) {
	if d, ok := relativeDays[key]; ok {
		return today.AddDate(0, 0, d), nil
	}
	if key == "" {
		return time.Time{}, refuse("date.not_date")
	}
	if key[0] >= '0' && key[0] <= '9' {
		if m := isoDate.FindStringSubmatch(key); m != nil {
			return makeDate(atoi(m[1]), atoi(m[2]), atoi(m[3]))
		}
		if m := dmyDate.FindStringSubmatch(key); m != nil {
			day, month := atoi(m[1]), atoi(m[2])
			if m[3] == "" {
				return dayMonth(day, month, today, rng)
			}
			year := atoi(m[3])
			if len(m[3]) == 2 {
				year += 2000
			}
			return makeDate(year, month, day)
		}
	}
	return parseDateWords(key, today, rng)
}

// parseDayAtTime reads a date with a time of day before or after it:
// "today at 17:30", "сегодня вечером", "сьогодні о 5", "later today",
// "at 5 pm tomorrow". The time must read as one, but only the day is kept;
// "later" and "earlier" are said of today only.
func parseDayAtTime(key string, today time.Time, rng string) (time.Time, error) {
	fields := dateFields(key)
	if len(fields) > maxDateWords {
		return time.Time{}, refuse("date.not_date")
	}
	for i := 1; i < len(fields); i++ {
		for _, split := range [2][2][]string{{fields[:i], fields[i:]}, {fields[i:], fields[:i]}} {
			day, clock := split[0], split[1]
			later, ok := timeOfDay(clock)
			if !ok {
				continue
			}
			d, err := parseDay(strings.Join(day, " "), today, rng)
			if isNotDate(err) || (err == nil && later && !d.Equal(today)) {
				continue
			}
			return d, err
		}
	}
	return time.Time{}, refuse("date.not_date")
}

// laterWords place a moment later or earlier today.
var laterWords = map[string]bool{"later": true, "earlier": true, "позже": true, "попозже": true, "пізніше": true}

// clockLeads are the prepositions before a clock time ("at 5", "в 5", "о
// 5"); a bare number after a date is not taken for an hour.
var clockLeads = map[string]bool{
	"at": true, "around": true, "about": true, "в": true, "во": true, "о": true, "об": true, "около": true, "близько": true,
}

// timeOfDay reports whether words name a time of day, and whether they
// say "later" or "earlier". A clock time counts when a preposition leads
// it, a part of the day goes with it or it is written with a colon or
// am/pm ("at 5", "5 вечера", "17:30", "5pm"); parts of the day count alone
// ("вечером", "in the evening", "later"). "дня" is no part of the day
// here: "2 дня" are as likely two days.
func timeOfDay(fields []string) (later, ok bool) {
	s := spaceAMPM(strings.Join(fields, " "))
	if _, fixed := fixedTimes[s]; fixed {
		return false, true
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		return false, false
	}
	lead, part, clock := clockLeads[words[0]], false, false
	for _, f := range words {
		switch {
		case laterWords[f]:
			later, part = true, true
		case dayParts[f] != 0 && f != "дня":
			part = true
		case timeFillers[f]:
		default:
			clock = true
			lead = lead || strings.Contains(f, ":")
		}
	}
	if !clock || later {
		return later, part && !clock // "вечером", "in the evening", "later"
	}
	if !lead && !part {
		return false, false // "сегодня 5": five what?
	}
	_, err := clockOf(s)
	return false, err == nil
}

// dateToken is one word of a written date, by kind.
type dateToken struct {
	kind    byte // D day number, Y year, M month, W weekday, n next, l last, t this, w week, m month word, d day word, a ago, i in, c count word
	n       int
	suffix  bool // a day number written as an ordinal: 3rd, 10-го
	article bool // "a", "an": a count of one, or the lead of "a couple"
}

var dateFillers = map[string]bool{
	"в": true, "во": true, "у": true, "on": true, "the": true, "of": true, "at": true, "на": true, "о": true,
	"об": true, "г": true, "года": true, "год": true, "р": true, "року": true, "рік": true, "for": true, "date": true,
	"дата": true, "день": false, "по": true, "за": true,
}

// dayMarkers turn a bare number into a day of month: "10 числа".
var dayMarkers = map[string]bool{"числа": true, "число": true}

var modifiers = map[string]byte{
	"next": 'n', "coming": 'n', "following": 'n', "следующий": 'n', "следующую": 'n', "следующее": 'n', "следующей": 'n',
	"следующего": 'n', "следующем": 'n', "ближайший": 'n', "ближайшую": 'n', "ближайшее": 'n', "наступний": 'n', "наступну": 'n',
	"наступне": 'n', "наступної": 'n', "наступного": 'n', "наступному": 'n', "найближчий": 'n', "найближчу": 'n', "найближчої": 'n',
	"last": 'l', "previous": 'l', "past": 'l', "прошлый": 'l', "прошлую": 'l', "прошлое": 'l', "прошлой": 'l', "прошлого": 'l',
	"прошлом": 'l', "предыдущий": 'l', "предыдущую": 'l', "минулий": 'l', "минулу": 'l', "минуле": 'l', "минулої": 'l',
	"минулого": 'l', "минулому": 'l', "попередній": 'l', "попередню": 'l',
	"this": 't', "этот": 't', "эту": 't', "это": 't', "этой": 't', "этого": 't', "этом": 't', "цей": 't', "цю": 't', "це": 't',
	"цієї": 't', "цього": 't', "цій": 't', "цьому": 't', "текущий": 't', "текущем": 't', "поточний": 't', "поточного": 't',
}

var periodWords = map[string]byte{
	"week": 'w', "weeks": 'w', "неделе": 'w', "неделю": 'w', "недели": 'w', "неделя": 'w', "недель": 'w', "тижня": 'w',
	"тижні": 'w', "тиждень": 'w', "тижнів": 'w', "тижнями": 'w',
	"month": 'm', "месяца": 'm', "месяце": 'm', "месяц": 'm', "місяця": 'm', "місяці": 'm', "місяць": 'm',
	"day": 'd', "days": 'd', "день": 'd', "дня": 'd', "дней": 'd', "дні": 'd', "днів": 'd',
	"ago": 'a', "назад": 'a', "тому": 'a',
	"in": 'i', "через": 'i', "після": 'i',
}

// weekdays by their written forms, Monday = 1 … Sunday = 7.
var weekdays = func() map[string]int {
	m := map[string]int{}
	for day, forms := range [][]string{
		1: {"monday", "mon", "понедельник", "понедельника", "пн", "понеділок", "понеділка", "понеділку"},
		2: {"tuesday", "tue", "tues", "вторник", "вторника", "вт", "вівторок", "вівторка", "вівторку"},
		3: {"wednesday", "wed", "среда", "среду", "среды", "ср", "середа", "середу", "середи"},
		4: {"thursday", "thu", "thur", "thurs", "четверг", "четверга", "чт", "четвер", "четверга", "четверок"},
		5: {"friday", "fri", "пятница", "пятницу", "пятницы", "пт", "п'ятниця", "п'ятницю", "п'ятниці", "пятниця", "пятницю", "пятниці"},
		6: {"saturday", "sat", "суббота", "субботу", "субботы", "сб", "субота", "суботу", "суботи"},
		7: {"sunday", "sun", "воскресенье", "воскресенья", "вс", "неділя", "неділю", "неділі", "нд"},
	} {
		for _, f := range forms {
			m[f] = day
		}
	}
	return m
}()

// monthStems are the beginnings of month names; a token is a month when it
// starts with a stem and is at most a few letters longer.
var monthStems = []struct {
	stem  string
	month int
}{
	{"january", 1}, {"jan", 1}, {"январ", 1}, {"янв", 1}, {"січ", 1},
	{"february", 2}, {"feb", 2}, {"феврал", 2}, {"фев", 2}, {"лют", 2},
	{"march", 3}, {"mar", 3}, {"март", 3}, {"мар", 3}, {"берез", 3},
	{"april", 4}, {"apr", 4}, {"апрел", 4}, {"апр", 4}, {"квіт", 4},
	{"may", 5}, {"травн", 5}, {"трав", 5},
	{"june", 6}, {"jun", 6}, {"июн", 6}, {"червн", 6}, {"черв", 6},
	{"july", 7}, {"jul", 7}, {"июл", 7}, {"липн", 7}, {"лип", 7},
	{"august", 8}, {"aug", 8}, {"август", 8}, {"авг", 8}, {"серпн", 8}, {"серп", 8},
	{"september", 9}, {"sept", 9}, {"sep", 9}, {"сентябр", 9}, {"сент", 9}, {"сен", 9}, {"вересн", 9}, {"вер", 9},
	{"october", 10}, {"oct", 10}, {"октябр", 10}, {"окт", 10}, {"жовтн", 10}, {"жовт", 10},
	{"november", 11}, {"nov", 11}, {"ноябр", 11}, {"ноя", 11}, {"листопад", 11}, {"лист", 11},
	{"december", 12}, {"dec", 12}, {"декабр", 12}, {"дек", 12}, {"грудн", 12}, {"груд", 12},
}

var exactMonths = map[string]int{"май": 5, "мая": 5, "мае": 5}

func monthOf(tok string) (int, bool) {
	if m, ok := exactMonths[tok]; ok {
		return m, true
	}
	for _, s := range monthStems {
		if strings.HasPrefix(tok, s.stem) && len([]rune(tok))-len([]rune(s.stem)) <= 4 {
			return s.month, true
		}
	}
	return 0, false
}

// parseDateWords reads a date written in words, such as "next Friday",
// "15 декабря" or "через два дня".
func parseDateWords(key string, today time.Time, rng string) (time.Time, error) {
	toks, marker, ok := dateTokens(dateFields(key))
	if !ok {
		return time.Time{}, refuse("date.not_date")
	}
	if d, ok, err := relativeCount(toks, today); ok {
		return d, err
	}
	return resolveDate(toks, marker, today, rng)
}

// dateFields are the words of a key without the marks a sentence leaves
// around each.
func dateFields(key string) []string {
	fields := strings.FieldsFunc(key, func(r rune) bool { return r == ' ' || r == ',' })
	out := fields[:0]
	for _, f := range fields {
		if f = strings.Trim(f, ".!?;:"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// dateTokens reads the words of a written date; ok is false at a word that
// belongs to none. marker says that a bare number is a day of month ("the
// 10", "10 числа").
func dateTokens(fields []string) (toks []dateToken, marker, ok bool) {
	toks = make([]dateToken, 0, len(fields))
	for _, f := range fields {
		if dateFillers[f] {
			marker = marker || f == "the"
			continue
		}
		if dayMarkers[f] {
			marker = true
			continue
		}
		t, ok := dateWord(f)
		if !ok {
			return nil, false, false
		}
		if n := len(toks); n > 0 && joinCount(&toks[n-1], t) {
			continue
		}
		toks = append(toks, t)
	}
	return toks, marker, true
}

// dateWord is one word of a written date.
func dateWord(f string) (dateToken, bool) {
	if m := dayTok.FindStringSubmatch(f); m != nil {
		return dateToken{kind: 'D', n: atoi(m[1]), suffix: m[2] != ""}, true
	}
	if allDigits(f) && len(f) == 4 {
		return dateToken{kind: 'Y', n: atoi(f)}, true
	}
	if allDigits(f) && len(f) == 3 {
		return dateToken{kind: 'c', n: atoi(f)}, true // only a count: "через 100 дней"
	}
	if wd, ok := weekdays[f]; ok {
		return dateToken{kind: 'W', n: wd}, true
	}
	if k, ok := modifiers[f]; ok {
		return dateToken{kind: k}, true
	}
	if k, ok := periodWords[f]; ok {
		return dateToken{kind: k}, true
	}
	if m, ok := monthOf(f); ok {
		return dateToken{kind: 'M', n: m}, true
	}
	if n, ok := countWord(f); ok {
		return dateToken{kind: 'c', n: n, article: f == "a" || f == "an"}, true
	}
	return dateToken{}, false
}

// joinCount folds a number word into the count before it, as parseCount
// does: "twenty one", and "a couple" where the article only leads in.
func joinCount(prev *dateToken, t dateToken) bool {
	if prev.kind != 'c' || t.kind != 'c' || t.article {
		return false
	}
	switch {
	case prev.article:
		*prev = t
	case tensAndUnits(prev.n, t.n):
		prev.n += t.n
	default:
		return false
	}
	return true
}

// relativeCount resolves a count of days or weeks from today: "3 дня
// назад", "in two weeks", "через неделю". ok is false for any other date.
func relativeCount(toks []dateToken, today time.Time) (time.Time, bool, error) {
	sig := []byte(signature(toks))
	for i, k := range sig {
		if k == 'D' || k == 'Y' {
			sig[i] = 'c' // a number, "3rd" and "1000" too, counts here
		}
	}
	dir, unit := 0, 0
	switch string(sig) {
	case "cda", "da":
		dir, unit = -1, 1
	case "cwa", "wa":
		dir, unit = -1, 7
	case "icd", "id":
		dir, unit = 1, 1
	case "icw", "iw":
		dir, unit = 1, 7
	default:
		return time.Time{}, false, nil
	}
	n := 1 // "через неделю", "a day ago"
	for _, t := range toks {
		if t.kind == 'D' || t.kind == 'Y' || t.kind == 'c' {
			n = t.n
		}
	}
	if n*unit > maxRelativeDays {
		return time.Time{}, true, refuse("date.too_far", Args{"days": maxRelativeDays})
	}
	return today.AddDate(0, 0, dir*n*unit), true, nil
}

func signature(toks []dateToken) string {
	sig := make([]byte, len(toks))
	for i, t := range toks {
		sig[i] = t.kind
	}
	return string(sig)
}

// resolveDate resolves the tokens of a day named by its weekday, day of
// month or month.
func resolveDate(toks []dateToken, marker bool, today time.Time, rng string) (time.Time, error) {
	sig := signature(toks)
	num := func(k byte) int {
		for _, t := range toks {
			if t.kind == k {
				return t.n
			}
		}
		return 0
	}
	switch sig {
	case "DM", "MD":
		return dayMonth(num('D'), num('M'), today, rng)
	case "DMY", "MDY":
		return makeDate(num('Y'), num('M'), num('D'))
	case "Dnm", "Dtm", "Dlm", "nmD", "tmD", "lmD":
		return dayOfMonthAway(today, num('D'), strings.IndexByte(sig, 'n') >= 0, strings.IndexByte(sig, 'l') >= 0)
	case "D":
		if !toks[0].suffix && !marker {
			return time.Time{}, refuse("date.not_date")
		}
		return dayOfMonth(num('D'), today, rng)
	case "W":
		return weekday(today, num('W'), rng), nil
	case "nW", "Wn":
		return nextWeekday(today, num('W'), 1), nil
	case "lW", "Wl":
		return nextWeekday(today, num('W'), -1), nil
	case "tW", "Wt", "Wtw", "twW":
		return inWeek(today, num('W'), 0), nil
	case "Wnw", "nwW":
		return inWeek(today, num('W'), 1), nil
	case "Wlw", "lwW":
		return inWeek(today, num('W'), -1), nil
	}
	return time.Time{}, refuse("date.not_date")
}

// dayOfMonthAway is a day of this month, of the next or of the last.
func dayOfMonthAway(today time.Time, day int, next, last bool) (time.Time, error) {
	month := today.Month()
	switch {
	case next:
		month++
	case last:
		month--
	}
	first := time.Date(today.Year(), month, 1, 0, 0, 0, 0, time.UTC)
	return makeDate(first.Year(), int(first.Month()), day)
}

// weekday resolves a bare weekday: the nearest one on or after today, or on
// or before today for a past-only date.
func weekday(today time.Time, wd int, rng string) time.Time {
	diff := (wd - isoWeekday(today) + 7) % 7
	if rng == Past {
		return today.AddDate(0, 0, -((isoWeekday(today) - wd + 7) % 7))
	}
	return today.AddDate(0, 0, diff)
}

// nextWeekday is the first such day after today (dir 1) or the last before
// it (dir -1).
func nextWeekday(today time.Time, wd, dir int) time.Time {
	if dir > 0 {
		diff := (wd - isoWeekday(today) + 7) % 7
		if diff == 0 {
			diff = 7
		}
		return today.AddDate(0, 0, diff)
	}
	diff := (isoWeekday(today) - wd + 7) % 7
	if diff == 0 {
		diff = 7
	}
	return today.AddDate(0, 0, -diff)
}

// inWeek is the weekday of the Monday-based week weeks away from this one.
func inWeek(today time.Time, wd, weeks int) time.Time {
	monday := today.AddDate(0, 0, 1-isoWeekday(today))
	return monday.AddDate(0, 0, 7*weeks+wd-1)
}

func isoWeekday(t time.Time) int {
	wd := int(t.Weekday())
	if wd == 0 {
		return 7
	}
	return wd
}

// dayMonth resolves a day and month written without a year.
func dayMonth(day, month int, today time.Time, rng string) (time.Time, error) {
	year := today.Year()
	if _, err := makeDate(2024, month, day); err != nil {
		return time.Time{}, err // impossible in any year, 29 February aside
	}
	d, err := makeDate(year, month, day)
	switch rng {
	case Past:
		if err != nil || d.After(today) {
			d, err = makeDate(year-1, month, day)
		}
	case Future:
		if err != nil || d.Before(today) {
			d, err = makeDate(year+1, month, day)
		}
	}
	return d, err
}

// dayOfMonth resolves a bare day of month.
func dayOfMonth(day int, today time.Time, rng string) (time.Time, error) {
	if day < 1 || day > 31 {
		return time.Time{}, refuse("date.no_such")
	}
	first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	d, err := makeDate(first.Year(), int(first.Month()), day)
	switch {
	case rng == Past && (err != nil || d.After(today)):
		prev := first.AddDate(0, -1, 0)
		return makeDate(prev.Year(), int(prev.Month()), day)
	case rng != Past && (err != nil || d.Before(today)):
		next := first.AddDate(0, 1, 0)
		return makeDate(next.Year(), int(next.Month()), day)
	}
	return d, err
}

// makeDate refuses an impossible date instead of rolling it over.
func makeDate(y, m, d int) (time.Time, error) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != m || t.Day() != d || y < 1000 || y > 9999 {
		return time.Time{}, refuse("date.no_such")
	}
	return t, nil
}
