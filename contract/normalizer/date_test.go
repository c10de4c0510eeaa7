package normalizer_test

import (
	"testing"
	"time"

	"github.com/slotd/slotd/contract/normalizer"
)

// date is the date parser on Monday 24 August 2026 at noon in Moscow.
func date(rng string) parser {
	return func(v any) (any, error) {
		return result(normalizer.Date(v, normalizer.DateOptions{Now: monday, Location: moscow, Range: rng}))
	}
}

func TestDate(t *testing.T) {
	t.Parallel()
	run(t, date(""), []dirty{
		{raw: "сегодня", want: "2026-08-24"},
		{raw: "Вчера", want: "2026-08-23"},
		{raw: "позавчера", want: "2026-08-22"},
		{raw: "завтра", want: "2026-08-25"},
		{raw: "сьогодні", want: "2026-08-24"},
		{raw: "вчора", want: "2026-08-23"},
		{raw: "позавчора", want: "2026-08-22"},
		{raw: "Tomorrow", want: "2026-08-25"},
		{raw: "yesterday.", want: "2026-08-23"},
		{raw: "today", want: "2026-08-24"},
		{raw: "СЕГОДНЯ!", want: "2026-08-24"},
		{raw: "The day before  yesterday", want: "2026-08-22"},
		{raw: "\u00a0\u200bвчера\u200d\ufeff", want: "2026-08-23"},
		{raw: "next Friday", want: "2026-08-28"},
		{raw: "next Monday", want: "2026-08-31"}, // the first Monday after today
		{raw: "в следующую пятницу", want: "2026-08-28"},
		{raw: "наступної п’ятниці", want: "2026-08-28"},
		{raw: "в пятницу", want: "2026-08-28"},
		{raw: "у п'ятницю", want: "2026-08-28"},
		{raw: "Friday next week", want: "2026-09-04"},
		{raw: "в пятницу на следующей неделе", want: "2026-09-04"},
		{raw: "наступного тижня в п'ятницю", want: "2026-09-04"},
		{raw: "this Friday", want: "2026-08-28"},
		{raw: "this Monday", want: "2026-08-24"},
		{raw: "last Friday", want: "2026-08-21"},
		{raw: "в прошлую пятницу", want: "2026-08-21"},
		{raw: "минулого понеділка", want: "2026-08-17"},
		{raw: "the 3rd of next month", want: "2026-09-03"},
		{raw: "3 числа следующего месяца", want: "2026-09-03"},
		{raw: "3-го наступного місяця", want: "2026-09-03"},
		{raw: "the 10th", want: "2026-09-10"}, // the 10th has passed this month
		{raw: "the 30th", want: "2026-08-30"},
		{raw: "10-го", want: "2026-09-10"},
		{raw: "25 числа", want: "2026-08-25"},
		{raw: "15 December", want: "2026-12-15"},
		{raw: "15 декабря", want: "2026-12-15"},
		{raw: "15 грудня", want: "2026-12-15"},
		{raw: "15 декабря 2026 г.", want: "2026-12-15"},
		{raw: "15.12", want: "2026-12-15"},
		{raw: "15.12.2026", want: "2026-12-15"},
		{raw: "15/12/26", want: "2026-12-15"},
		{raw: "22/08/2026", want: "2026-08-22"},
		{raw: "2026-12-15", want: "2026-12-15"},
		{raw: "2026-8-5", want: "2026-08-05"},
		{raw: "2026-12-15T10:00:00Z", want: "2026-12-15"},
		{raw: "29.02.2024", want: "2024-02-29"},
		{raw: "Dec 15th", want: "2026-12-15"},
		{raw: "December 15, 2026", want: "2026-12-15"},
		{raw: "15th of December", want: "2026-12-15"},
		{raw: "3 дня назад", want: "2026-08-21"},
		{raw: "через 2 дня", want: "2026-08-26"},
		{raw: "two days ago", want: "2026-08-22"},
		{raw: "a week ago", want: "2026-08-17"},
		{raw: "\u200b15\u00a0декабря ", want: "2026-12-15"},
		{raw: "31.02", key: "date.no_such"},
		{raw: "31 февраля", key: "date.no_such"},
		{raw: "2026-13-01", key: "date.no_such"},
		{raw: "2026-02-29", key: "date.no_such"},
		{raw: "08/22/2026", key: "date.no_such"}, // month-first is not guessed
		{raw: "someday", key: "date.not_date"},
		{raw: "10", key: "date.not_date"}, // a bare number is no day
		{raw: "next blursday", key: "date.not_date"},
		{raw: 20261215.0, key: "date.not_text"},
	})
}

// TestDateRelative is the relative days people and models write, as they
// write them.
func TestDateRelative(t *testing.T) {
	t.Parallel()
	run(t, date(""), []dirty{
		// en: a time of day only says which day.
		{raw: "later today", want: "2026-08-24"},
		{raw: "Later today.", want: "2026-08-24"},
		{raw: "This evening", want: "2026-08-24"},
		{raw: "tonight!", want: "2026-08-24"},
		{raw: "later tonight", want: "2026-08-24"},
		{raw: "today at 5", want: "2026-08-24"},
		{raw: "Today at 17:30", want: "2026-08-24"},
		{raw: "today, at 5 p.m.", want: "2026-08-24"},
		{raw: "today at 5pm", want: "2026-08-24"},
		{raw: "today 17:30", want: "2026-08-24"},
		{raw: "today in the evening", want: "2026-08-24"},
		{raw: "at noon today", want: "2026-08-24"},
		{raw: "this afternoon", want: "2026-08-24"},
		{raw: "This morning", want: "2026-08-24"},
		{raw: "at 5 pm tomorrow", want: "2026-08-25"},
		{raw: "next Friday at 10:00", want: "2026-08-28"},
		{raw: "2026-12-15 at 10:00", want: "2026-12-15"},
		// en: counts of days and weeks.
		{raw: "in two days", want: "2026-08-26"},
		{raw: "In 2 days", want: "2026-08-26"},
		{raw: "in three  days", want: "2026-08-27"},
		{raw: "in 2 days in the evening", want: "2026-08-26"},
		{raw: "the day after tomorrow", want: "2026-08-26"},
		{raw: "Day after tomorrow", want: "2026-08-26"},
		{raw: "in a week", want: "2026-08-31"},
		{raw: "3 days ago.", want: "2026-08-21"},
		{raw: "twenty-one days ago", want: "2026-08-03"},
		{raw: "twenty one days ago", want: "2026-08-03"},
		{raw: "a couple of days ago", want: "2026-08-22"},
		// ru
		{raw: "сегодня вечером", want: "2026-08-24"},
		{raw: "Сегодня Вечером", want: "2026-08-24"},
		{raw: "сегодня днём", want: "2026-08-24"},
		{raw: "сегодня днем", want: "2026-08-24"},
		{raw: "сегодня утром", want: "2026-08-24"},
		{raw: "сегодня ночью", want: "2026-08-24"},
		{raw: "сегодня в 5", want: "2026-08-24"},
		{raw: "сегодня, в 17:30", want: "2026-08-24"},
		{raw: "Сегодня в 17.30", want: "2026-08-24"},
		{raw: "сегодня в 2 дня", want: "2026-08-24"},
		{raw: "в 17:30 сегодня", want: "2026-08-24"},
		{raw: "позже сегодня", want: "2026-08-24"},
		{raw: "сегодня попозже", want: "2026-08-24"},
		{raw: "через два дня", want: "2026-08-26"},
		{raw: "Через\u00a02\u00a0дня", want: "2026-08-26"},
		{raw: "через три дня", want: "2026-08-27"},
		{raw: "через два дня вечером", want: "2026-08-26"},
		{raw: "через неделю", want: "2026-08-31"},
		{raw: "послезавтра", want: "2026-08-26"},
		{raw: "Послезавтра!", want: "2026-08-26"},
		{raw: "два дня назад", want: "2026-08-22"},
		{raw: "двадцать один день назад", want: "2026-08-03"},
		{raw: "через 100 дней", want: "2026-12-02"},
		{raw: "через 366 дней", want: "2027-08-25"},
		{raw: "в пятницу на следующей неделе в 5", want: "2026-09-04"},
		// uk, with each apostrophe models use
		{raw: "сьогодні ввечері", want: "2026-08-24"},
		{raw: "Сьогодні  вдень", want: "2026-08-24"},
		{raw: "сьогодні вранці", want: "2026-08-24"},
		{raw: "сьогодні о 5", want: "2026-08-24"},
		{raw: "сьогодні о п’ятій", want: "2026-08-24"},
		{raw: "сьогодні о пʼятій", want: "2026-08-24"},
		{raw: "пізніше сьогодні", want: "2026-08-24"},
		{raw: "через два дні", want: "2026-08-26"},
		{raw: "через 2 дні", want: "2026-08-26"},
		{raw: "через три дні", want: "2026-08-27"},
		{raw: "через тиждень", want: "2026-08-31"},
		{raw: "Післязавтра", want: "2026-08-26"},
		{raw: "два дні тому", want: "2026-08-22"},
		{raw: "3 дні тому", want: "2026-08-21"},
		{raw: "через п’ять днів", want: "2026-08-29"},
		{raw: "через дев'ять днів", want: "2026-09-02"},
		// Phrases that are not one date stay refused.
		{raw: "today at the bank", key: "date.not_date"},
		{raw: "сегодня в банке", key: "date.not_date"},
		{raw: "today or tomorrow", key: "date.not_date"},
		{raw: "сегодня или завтра", key: "date.not_date"},
		{raw: "сьогодні або завтра", key: "date.not_date"},
		{raw: "через два банана", key: "date.not_date"},
		{raw: "tomorrow 15.12", key: "date.not_date"},
		{raw: "сегодня 5", key: "date.not_date"},    // five what?
		{raw: "завтра 2 дня", key: "date.not_date"}, // 14:00 or two days?
		{raw: "later this week", key: "date.not_date"},
		{raw: "later tomorrow", key: "date.not_date"},
		{raw: "today at 25:00", key: "date.not_date"},
		{raw: "сегодня в 19:00 утра", key: "date.not_date"},
		{raw: "сегодня в", key: "date.not_date"},
		{raw: "вечером", key: "date.not_date"},
		{raw: "в 5", key: "date.not_date"},
		{raw: "2 days", key: "date.not_date"},
		{raw: "in 2", key: "date.not_date"},
		{raw: "one two days ago", key: "date.not_date"},
		{raw: "31.02 at 5", key: "date.no_such"},
		// Counts are bounded.
		{raw: "через 367 дней", key: "date.too_far", args: normalizer.Args{"days": 366}},
		{raw: "in 53 weeks", key: "date.too_far", args: normalizer.Args{"days": 366}},
		{raw: "1000 days ago", key: "date.too_far", args: normalizer.Args{"days": 366}},
	})
}

func TestDateRange(t *testing.T) {
	t.Parallel()
	future := normalizer.Args{"day": "2026-08-24"}
	run(t, date(normalizer.Past), []dirty{
		{raw: "31.12", want: "2025-12-31"}, // an operation date: last year's, not the future
		{raw: "15 декабря", want: "2025-12-15"},
		{raw: "24.08", want: "2026-08-24"},
		{raw: "22.08", want: "2026-08-22"},
		{raw: "в пятницу", want: "2026-08-21"},
		{raw: "в понедельник", want: "2026-08-24"},
		{raw: "the 30th", want: "2026-07-30"},
		{raw: "вчера", want: "2026-08-23"},
		{raw: "два дні тому", want: "2026-08-22"},
		{raw: "tonight", want: "2026-08-24"},
		{raw: "сегодня в 17:30", want: "2026-08-24"}, // later than noon, still today
		{raw: "earlier today", want: "2026-08-24"},
		{raw: "завтра", key: "date.future", args: future},
		{raw: "2999-01-01", key: "date.future", args: future},
		{raw: "29.02.2028", key: "date.future", args: future},
		{raw: "next Friday", key: "date.future", args: future},
		// Relative days are checked, never moved to the allowed side.
		{raw: "через два дня", key: "date.future", args: future},
		{raw: "in 2 days", key: "date.future", args: future},
		{raw: "Послезавтра", key: "date.future", args: future},
		{raw: "через тиждень", key: "date.future", args: future},
	})
	run(t, date(normalizer.Future), []dirty{
		{raw: "15.01", want: "2027-01-15"},
		{raw: "24 August", want: "2026-08-24"},
		{raw: "в пятницу", want: "2026-08-28"},
		{raw: "the 10th", want: "2026-09-10"},
		{raw: "через тиждень", want: "2026-08-31"},
		{raw: "later today", want: "2026-08-24"},
		{raw: "сегодня утром", want: "2026-08-24"}, // the morning has passed at noon, the day has not
		{raw: "завтра", want: "2026-08-25"},
		{raw: "the 30th", want: "2026-08-30"},
		{raw: "31.12", want: "2026-12-31"},
		{raw: "вчера", key: "date.past", args: future},
		{raw: "2026-08-01", key: "date.past", args: future},
		{raw: "два дня назад", key: "date.past", args: future},
		{raw: "3 days ago", key: "date.past", args: future},
		{raw: "last Friday", key: "date.past", args: future},
	})
}

// TestDateNearMidnight: today is the calendar day of the zone, not of the
// server's clock.
func TestDateNearMidnight(t *testing.T) {
	t.Parallel()
	// 21:30 UTC on 23 August is 00:30 on 24 August in Moscow and Kyiv.
	now := time.Date(2026, 8, 23, 21, 30, 0, 0, time.UTC)
	kyiv := zone("Europe/Kyiv")
	tests := []struct {
		raw  string
		loc  *time.Location
		want string
	}{
		{"сегодня", moscow, "2026-08-24"},
		{"вчера", moscow, "2026-08-23"},
		{"сегодня", time.UTC, "2026-08-23"},
		{"сегодня", nil, "2026-08-23"}, // no zone: UTC
		{"вчера", time.UTC, "2026-08-22"},
		{"сьогодні", kyiv, "2026-08-24"},
		{"22.08", moscow, "2026-08-22"},
		// "tonight" just after midnight is the day that has begun, as
		// "today" is; relative counts start from it too.
		{"tonight", moscow, "2026-08-24"},
		{"сегодня вечером", moscow, "2026-08-24"},
		{"today at 17:30", time.UTC, "2026-08-23"},
		{"два дня назад", moscow, "2026-08-22"},
		{"два дні тому", time.UTC, "2026-08-21"},
	}
	for _, tt := range tests {
		got, err := normalizer.Date(tt.raw, normalizer.DateOptions{Now: now, Location: tt.loc, Range: normalizer.Past})
		if err != nil || got != tt.want {
			t.Errorf("Date(%q) at %s in %v = %q, %v; want %s", tt.raw, now.Format(time.RFC3339), tt.loc, got, err, tt.want)
		}
	}
}

func TestDateWithoutAClockIsToday(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC().Format(time.DateOnly)
	got, err := normalizer.Date("today", normalizer.DateOptions{})
	after := time.Now().UTC().Format(time.DateOnly) // midnight may pass in between
	if err != nil || (got != before && got != after) {
		t.Errorf("Date(today) with a zero clock = %q, %v; want the wall clock's day in UTC, %s", got, err, before)
	}
}
