package contract

import (
	"regexp"
	"strconv"
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
//   - an impossible date ("31.02") is refused, never rolled over; an
//     American month-first date ("08/22/2026") is not guessed.

// relativeDays are the words for a day relative to today.
var relativeDays = map[string]int{
	"сегодня": 0, "вчера": -1, "позавчера": -2, "завтра": 1, "послезавтра": 2,
	"сьогодні": 0, "вчора": -1, "позавчора": -2, "післязавтра": 2, "позаучора": -2,
	"today": 0, "yesterday": -1, "tomorrow": 1, "the day before yesterday": -2, "the day after tomorrow": 2,
	"day before yesterday": -2, "day after tomorrow": 2, "tonight": 0, "this morning": 0, "this evening": 0,
	"yesterday morning": -1, "yesterday evening": -1, "yesterday afternoon": -1, "last night": -1,
	"сегодня утром": 0, "вчера вечером": -1, "вчера утром": -1, "вчера днем": -1, "вчора ввечері": -1, "вчора вранці": -1,
}

var (
	isoDate = regexp.MustCompile(`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:t.*|\s+\d.*)?$`)
	dmyDate = regexp.MustCompile(`^(\d{1,2})[./-](\d{1,2})(?:[./-](\d{4}|\d{2}))?(?:\s*(?:г|года|год|р|року|рік)\.?)?$`)
	dayTok  = regexp.MustCompile(`^(\d{1,2})(st|nd|rd|th|-?го|-?е|-?ое|-?ого|-?те|-?ге|-?й|-?ий|-?ре)?$`)
)

const (
	rangePast   = "past"
	rangeFuture = "future"
)

func normalizeDate(v any, p *Property, env Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, refuse("date.not_text")
	}
	today := env.today()
	d, err := parseDate(s, today, p.DateRange)
	if err != nil {
		return nil, err
	}
	switch {
	case p.DateRange == rangePast && d.After(today):
		return nil, refuse("date.future", today.Format(time.DateOnly))
	case p.DateRange == rangeFuture && d.Before(today):
		return nil, refuse("date.past", today.Format(time.DateOnly))
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

func parseDate(s string, today time.Time, rng string) (time.Time, error) {
	key := dateKey(s)
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

// dateToken is one word of a written date, by kind.
type dateToken struct {
	kind   byte // D day number, Y year, M month, W weekday, n next, l last, t this, w week, m month word, d day word, a ago, i in, c count word
	n      int
	suffix bool // a day number written as an ordinal: 3rd, 10-го
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

func parseDateWords(key string, today time.Time, rng string) (time.Time, error) {
	fields := strings.FieldsFunc(key, func(r rune) bool { return r == ' ' || r == ',' })
	toks := make([]dateToken, 0, len(fields))
	marker := false
	for _, f := range fields {
		f = strings.Trim(f, ".!?;:")
		if f == "" {
			continue
		}
		if dateFillers[f] {
			marker = marker || f == "the"
			continue
		}
		if dayMarkers[f] {
			marker = true
			continue
		}
		if m := dayTok.FindStringSubmatch(f); m != nil {
			toks = append(toks, dateToken{kind: 'D', n: atoi(m[1]), suffix: m[2] != ""})
			continue
		}
		if len(f) == 4 && allDigits(f) {
			toks = append(toks, dateToken{kind: 'Y', n: atoi(f)})
			continue
		}
		if wd, ok := weekdays[f]; ok {
			toks = append(toks, dateToken{kind: 'W', n: wd})
			continue
		}
		if k, ok := modifiers[f]; ok {
			toks = append(toks, dateToken{kind: k})
			continue
		}
		if k, ok := periodWords[f]; ok {
			toks = append(toks, dateToken{kind: k})
			continue
		}
		if m, ok := monthOf(f); ok {
			toks = append(toks, dateToken{kind: 'M', n: m})
			continue
		}
		if n, ok := countWords[f]; ok {
			toks = append(toks, dateToken{kind: 'c', n: n})
			continue
		}
		return time.Time{}, refuse("date.not_date")
	}
	sig := make([]byte, len(toks))
	for i, t := range toks {
		sig[i] = t.kind
	}
	num := func(k byte) int {
		for _, t := range toks {
			if t.kind == k {
				return t.n
			}
		}
		return 0
	}
	count := func() int {
		for _, t := range toks {
			if t.kind == 'D' || t.kind == 'c' {
				return t.n
			}
		}
		return 1
	}
	switch string(sig) {
	case "DM", "MD":
		return dayMonth(num('D'), num('M'), today, rng)
	case "DMY", "MDY":
		return makeDate(num('Y'), num('M'), num('D'))
	case "Dnm", "Dtm", "Dlm", "nmD", "tmD", "lmD":
		month := today.Month()
		switch {
		case strings.IndexByte(string(sig), 'n') >= 0:
			month++
		case strings.IndexByte(string(sig), 'l') >= 0:
			month--
		}
		first := time.Date(today.Year(), month, 1, 0, 0, 0, 0, time.UTC)
		return makeDate(first.Year(), int(first.Month()), num('D'))
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
	case "Dda", "cda", "da":
		return today.AddDate(0, 0, -count()), nil
	case "Dwa", "cwa", "wa":
		return today.AddDate(0, 0, -7*count()), nil
	case "iDd", "icd", "id":
		return today.AddDate(0, 0, count()), nil
	case "iDw", "icw", "iw":
		return today.AddDate(0, 0, 7*count()), nil
	}
	return time.Time{}, refuse("date.not_date")
}

// weekday resolves a bare weekday: the nearest one on or after today, or on
// or before today for a past-only date.
func weekday(today time.Time, wd int, rng string) time.Time {
	diff := (wd - isoWeekday(today) + 7) % 7
	if rng == rangePast {
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
	case rangePast:
		if err != nil || d.After(today) {
			d, err = makeDate(year-1, month, day)
		}
	case rangeFuture:
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
	case rng == rangePast && (err != nil || d.After(today)):
		prev := first.AddDate(0, -1, 0)
		return makeDate(prev.Year(), int(prev.Month()), day)
	case rng != rangePast && (err != nil || d.Before(today)):
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

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
