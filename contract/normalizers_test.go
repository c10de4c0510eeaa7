package contract_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/slotd/slotd/contract"
)

// kitchen is testdata/contracts/kitchen.json: one property per normalizer
// and variant, so that each normalizer's table reads on its own.
func kitchen(t testing.TB) *contract.Contract {
	t.Helper()
	src, err := os.ReadFile("testdata/contracts/kitchen.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Parse("kitchen.json", src)
	if err != nil {
		t.Fatalf("Parse(kitchen.json): %v", err)
	}
	return c
}

// monday is the kitchen tests' clock: Monday 24 August 2026, noon in Moscow.
func monday(t testing.TB, locale string) contract.Env {
	loc := mustLocation(t, "Europe/Moscow")
	return contract.Env{Now: time.Date(2026, 8, 24, 12, 0, 0, 0, loc), Location: loc, Locale: locale}
}

// dirty is one input a model sends and what must come of it: want, or a
// refusal whose message and format contain the given texts.
type dirty struct {
	slot   string
	raw    any
	want   any    // nil: refused
	msg    string // refusal: substring of Message
	format string // refusal: substring of Format
}

func runDirty(t *testing.T, c *contract.Contract, env contract.Env, tests []dirty) {
	t.Helper()
	if len(tests) < 15 {
		t.Fatalf("the table has %d cases, want at least 15", len(tests))
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.slot, tt.raw), func(t *testing.T) {
			t.Parallel()
			got, fe := c.Normalize(tt.slot, tt.raw, env)
			if tt.want == nil {
				if fe == nil {
					t.Fatalf("Normalize(%s, %#v) = %#v, want a refusal saying %q", tt.slot, tt.raw, got, tt.msg)
				}
				if !strings.Contains(fe.Message, tt.msg) {
					t.Errorf("message = %q, want it to contain %q", fe.Message, tt.msg)
				}
				if !strings.Contains(fe.Format, tt.format) {
					t.Errorf("format = %q, want it to contain %q", fe.Format, tt.format)
				}
				if fe.Pointer != "/"+tt.slot || fe.Input == "" || fe.Format == "" {
					t.Errorf("refusal %+v: want pointer /%s, the input and the accepted form", fe, tt.slot)
				}
				return
			}
			if fe != nil {
				t.Fatalf("Normalize(%s, %#v) refused it: %v; want %#v", tt.slot, tt.raw, fe, tt.want)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Normalize(%s, %#v) = %#v, want %#v", tt.slot, tt.raw, got, tt.want)
			}
			// A normalized value normalizes to itself: what slotd stored
			// compares equal to the same value sent again.
			again, fe := c.Normalize(tt.slot, got, env)
			if fe != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("Normalize(%s, %#v) again = %#v, %v; want it unchanged", tt.slot, got, again, fe)
			}
		})
	}
}

func TestNormalizerDate(t *testing.T) {
	t.Parallel()
	const form = "YYYY-MM-DD"
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "day", raw: "сегодня", want: "2026-08-24"},
		{slot: "day", raw: "Вчера", want: "2026-08-23"},
		{slot: "day", raw: "позавчера", want: "2026-08-22"},
		{slot: "day", raw: "завтра", want: "2026-08-25"},
		{slot: "day", raw: "сьогодні", want: "2026-08-24"},
		{slot: "day", raw: "вчора", want: "2026-08-23"},
		{slot: "day", raw: "позавчора", want: "2026-08-22"},
		{slot: "day", raw: "Tomorrow", want: "2026-08-25"},
		{slot: "day", raw: "yesterday.", want: "2026-08-23"},
		{slot: "day", raw: "today", want: "2026-08-24"},
		{slot: "day", raw: "next Friday", want: "2026-08-28"},
		{slot: "day", raw: "next Monday", want: "2026-08-31"}, // the first Monday after today
		{slot: "day", raw: "в следующую пятницу", want: "2026-08-28"},
		{slot: "day", raw: "наступної п’ятниці", want: "2026-08-28"},
		{slot: "day", raw: "в пятницу", want: "2026-08-28"},
		{slot: "day", raw: "у п'ятницю", want: "2026-08-28"},
		{slot: "day", raw: "Friday next week", want: "2026-09-04"},
		{slot: "day", raw: "в пятницу на следующей неделе", want: "2026-09-04"},
		{slot: "day", raw: "наступного тижня в п'ятницю", want: "2026-09-04"},
		{slot: "day", raw: "this Friday", want: "2026-08-28"},
		{slot: "day", raw: "this Monday", want: "2026-08-24"},
		{slot: "day", raw: "last Friday", want: "2026-08-21"},
		{slot: "day", raw: "в прошлую пятницу", want: "2026-08-21"},
		{slot: "day", raw: "минулого понеділка", want: "2026-08-17"},
		{slot: "day", raw: "the 3rd of next month", want: "2026-09-03"},
		{slot: "day", raw: "3 числа следующего месяца", want: "2026-09-03"},
		{slot: "day", raw: "3-го наступного місяця", want: "2026-09-03"},
		{slot: "day", raw: "the 10th", want: "2026-09-10"}, // the 10th has passed this month
		{slot: "day", raw: "the 30th", want: "2026-08-30"},
		{slot: "day", raw: "10-го", want: "2026-09-10"},
		{slot: "day", raw: "25 числа", want: "2026-08-25"},
		{slot: "day", raw: "15 December", want: "2026-12-15"},
		{slot: "day", raw: "15 декабря", want: "2026-12-15"},
		{slot: "day", raw: "15 грудня", want: "2026-12-15"},
		{slot: "day", raw: "15 декабря 2026 г.", want: "2026-12-15"},
		{slot: "day", raw: "15.12", want: "2026-12-15"},
		{slot: "day", raw: "15.12.2026", want: "2026-12-15"},
		{slot: "day", raw: "15/12/26", want: "2026-12-15"},
		{slot: "day", raw: "2026-12-15", want: "2026-12-15"},
		{slot: "day", raw: "2026-12-15T10:00:00Z", want: "2026-12-15"},
		{slot: "day", raw: "Dec 15th", want: "2026-12-15"},
		{slot: "day", raw: "December 15, 2026", want: "2026-12-15"},
		{slot: "day", raw: "15th of December", want: "2026-12-15"},
		{slot: "day", raw: "3 дня назад", want: "2026-08-21"},
		{slot: "day", raw: "через 2 дня", want: "2026-08-26"},
		{slot: "day", raw: "two days ago", want: "2026-08-22"},
		{slot: "day", raw: "a week ago", want: "2026-08-17"},
		{slot: "day", raw: "\u200b15\u00a0декабря ", want: "2026-12-15"},
		{slot: "day", raw: "31.02", msg: "no such date", format: form},
		{slot: "day", raw: "31 февраля", msg: "no such date", format: form},
		{slot: "day", raw: "2026-13-01", msg: "no such date", format: form},
		{slot: "day", raw: "08/22/2026", msg: "no such date", format: form}, // month-first is not guessed
		{slot: "day", raw: "someday", msg: "not a date", format: form},
		{slot: "day", raw: "10", msg: "not a date", format: form}, // a bare number is no day
		{slot: "day", raw: "next blursday", msg: "not a date", format: form},
		{slot: "day", raw: 20261215.0, msg: "date as text", format: form},
	})
}

// TestNormalizerRelativeDate is the relative days people and models write,
// as they write them, on Monday 24 August 2026 at noon in Moscow.
func TestNormalizerRelativeDate(t *testing.T) {
	t.Parallel()
	const form = "YYYY-MM-DD"
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		// en: a time of day only says which day.
		{slot: "day", raw: "later today", want: "2026-08-24"},
		{slot: "day", raw: "Later today.", want: "2026-08-24"},
		{slot: "day", raw: "This evening", want: "2026-08-24"},
		{slot: "day", raw: "tonight!", want: "2026-08-24"},
		{slot: "day", raw: "later tonight", want: "2026-08-24"},
		{slot: "day", raw: "today at 5", want: "2026-08-24"},
		{slot: "day", raw: "Today at 17:30", want: "2026-08-24"},
		{slot: "day", raw: "today, at 5 p.m.", want: "2026-08-24"},
		{slot: "day", raw: "today at 5pm", want: "2026-08-24"},
		{slot: "day", raw: "today 17:30", want: "2026-08-24"},
		{slot: "day", raw: "today in the evening", want: "2026-08-24"},
		{slot: "day", raw: "at noon today", want: "2026-08-24"},
		{slot: "day", raw: "this afternoon", want: "2026-08-24"},
		{slot: "day", raw: "This morning", want: "2026-08-24"},
		{slot: "day", raw: "at 5 pm tomorrow", want: "2026-08-25"},
		{slot: "day", raw: "next Friday at 10:00", want: "2026-08-28"},
		{slot: "day", raw: "2026-12-15 at 10:00", want: "2026-12-15"},
		// en: counts of days and weeks.
		{slot: "day", raw: "in two days", want: "2026-08-26"},
		{slot: "day", raw: "In 2 days", want: "2026-08-26"},
		{slot: "day", raw: "in three  days", want: "2026-08-27"},
		{slot: "day", raw: "in 2 days in the evening", want: "2026-08-26"},
		{slot: "day", raw: "the day after tomorrow", want: "2026-08-26"},
		{slot: "day", raw: "Day after tomorrow", want: "2026-08-26"},
		{slot: "day", raw: "in a week", want: "2026-08-31"},
		{slot: "day", raw: "two days ago", want: "2026-08-22"},
		{slot: "day", raw: "3 days ago.", want: "2026-08-21"},
		{slot: "day", raw: "twenty-one days ago", want: "2026-08-03"},
		{slot: "day", raw: "twenty one days ago", want: "2026-08-03"},
		{slot: "day", raw: "a couple of days ago", want: "2026-08-22"},
		// ru
		{slot: "day", raw: "сегодня вечером", want: "2026-08-24"},
		{slot: "day", raw: "Сегодня Вечером", want: "2026-08-24"},
		{slot: "day", raw: "сегодня днём", want: "2026-08-24"},
		{slot: "day", raw: "сегодня днем", want: "2026-08-24"},
		{slot: "day", raw: "сегодня утром", want: "2026-08-24"},
		{slot: "day", raw: "сегодня ночью", want: "2026-08-24"},
		{slot: "day", raw: "сегодня в 5", want: "2026-08-24"},
		{slot: "day", raw: "сегодня, в 17:30", want: "2026-08-24"},
		{slot: "day", raw: "Сегодня в 17.30", want: "2026-08-24"},
		{slot: "day", raw: "сегодня в 2 дня", want: "2026-08-24"},
		{slot: "day", raw: "в 17:30 сегодня", want: "2026-08-24"},
		{slot: "day", raw: "позже сегодня", want: "2026-08-24"},
		{slot: "day", raw: "сегодня попозже", want: "2026-08-24"},
		{slot: "day", raw: "через два дня", want: "2026-08-26"},
		{slot: "day", raw: "Через\u00a02\u00a0дня", want: "2026-08-26"},
		{slot: "day", raw: "через три дня", want: "2026-08-27"},
		{slot: "day", raw: "через два дня вечером", want: "2026-08-26"},
		{slot: "day", raw: "через неделю", want: "2026-08-31"},
		{slot: "day", raw: "послезавтра", want: "2026-08-26"},
		{slot: "day", raw: "Послезавтра!", want: "2026-08-26"},
		{slot: "day", raw: "два дня назад", want: "2026-08-22"},
		{slot: "day", raw: "3 дня назад", want: "2026-08-21"},
		{slot: "day", raw: "двадцать один день назад", want: "2026-08-03"},
		{slot: "day", raw: "через 100 дней", want: "2026-12-02"},
		{slot: "day", raw: "через 366 дней", want: "2027-08-25"},
		{slot: "day", raw: "в пятницу на следующей неделе в 5", want: "2026-09-04"},
		// uk, with each apostrophe models use
		{slot: "day", raw: "сьогодні ввечері", want: "2026-08-24"},
		{slot: "day", raw: "Сьогодні  вдень", want: "2026-08-24"},
		{slot: "day", raw: "сьогодні вранці", want: "2026-08-24"},
		{slot: "day", raw: "сьогодні о 5", want: "2026-08-24"},
		{slot: "day", raw: "сьогодні о п’ятій", want: "2026-08-24"},
		{slot: "day", raw: "сьогодні о пʼятій", want: "2026-08-24"},
		{slot: "day", raw: "пізніше сьогодні", want: "2026-08-24"},
		{slot: "day", raw: "через два дні", want: "2026-08-26"},
		{slot: "day", raw: "через 2 дні", want: "2026-08-26"},
		{slot: "day", raw: "через три дні", want: "2026-08-27"},
		{slot: "day", raw: "через тиждень", want: "2026-08-31"},
		{slot: "day", raw: "Післязавтра", want: "2026-08-26"},
		{slot: "day", raw: "два дні тому", want: "2026-08-22"},
		{slot: "day", raw: "3 дні тому", want: "2026-08-21"},
		{slot: "day", raw: "через п’ять днів", want: "2026-08-29"},
		{slot: "day", raw: "через дев'ять днів", want: "2026-09-02"},
		// Phrases that are not one date stay refused.
		{slot: "day", raw: "today at the bank", msg: "not a date", format: form},
		{slot: "day", raw: "сегодня в банке", msg: "not a date", format: form},
		{slot: "day", raw: "today or tomorrow", msg: "not a date", format: form},
		{slot: "day", raw: "сегодня или завтра", msg: "not a date", format: form},
		{slot: "day", raw: "сьогодні або завтра", msg: "not a date", format: form},
		{slot: "day", raw: "через два банана", msg: "not a date", format: form},
		{slot: "day", raw: "tomorrow 15.12", msg: "not a date", format: form},
		{slot: "day", raw: "сегодня 5", msg: "not a date", format: form},    // five what?
		{slot: "day", raw: "завтра 2 дня", msg: "not a date", format: form}, // 14:00 or two days?
		{slot: "day", raw: "later this week", msg: "not a date", format: form},
		{slot: "day", raw: "later tomorrow", msg: "not a date", format: form},
		{slot: "day", raw: "today at 25:00", msg: "not a date", format: form},
		{slot: "day", raw: "сегодня в 19:00 утра", msg: "not a date", format: form},
		{slot: "day", raw: "сегодня в", msg: "not a date", format: form},
		{slot: "day", raw: "вечером", msg: "not a date", format: form},
		{slot: "day", raw: "в 5", msg: "not a date", format: form},
		{slot: "day", raw: "2 days", msg: "not a date", format: form},
		{slot: "day", raw: "in 2", msg: "not a date", format: form},
		{slot: "day", raw: "one two days ago", msg: "not a date", format: form},
		{slot: "day", raw: "31.02 at 5", msg: "no such date", format: form},
		// Counts are bounded.
		{slot: "day", raw: "через 367 дней", msg: "more than 366 days", format: form},
		{slot: "day", raw: "in 53 weeks", msg: "more than 366 days", format: form},
		{slot: "day", raw: "1000 days ago", msg: "more than 366 days", format: form},
	})
}

// TestNormalizerDateTooFarWording: the bound is said in the turn's language.
func TestNormalizerDateTooFarWording(t *testing.T) {
	t.Parallel()
	c := kitchen(t)
	for locale, want := range map[string]string{"ru": "больше 366 дней", "uk": "більше 366 днів", "en": "more than 366 days"} {
		_, fe := c.Normalize("day", "через 400 дней", monday(t, locale))
		if fe == nil || !strings.Contains(fe.Message, want) {
			t.Errorf("через 400 дней in %s: refusal %+v, want a message containing %q", locale, fe, want)
		}
	}
}

func TestNormalizerDateRange(t *testing.T) {
	t.Parallel()
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "past_day", raw: "31.12", want: "2025-12-31"}, // an operation date: last year's, not the future
		{slot: "past_day", raw: "15 декабря", want: "2025-12-15"},
		{slot: "past_day", raw: "24.08", want: "2026-08-24"},
		{slot: "past_day", raw: "в пятницу", want: "2026-08-21"},
		{slot: "past_day", raw: "в понедельник", want: "2026-08-24"},
		{slot: "past_day", raw: "the 30th", want: "2026-07-30"},
		{slot: "past_day", raw: "вчера", want: "2026-08-23"},
		{slot: "past_day", raw: "завтра", msg: "in the future", format: "YYYY-MM-DD"},
		{slot: "past_day", raw: "2999-01-01", msg: "in the future"},
		{slot: "past_day", raw: "next Friday", msg: "in the future"},
		{slot: "future_day", raw: "15.01", want: "2027-01-15"},
		{slot: "future_day", raw: "24 August", want: "2026-08-24"},
		{slot: "future_day", raw: "в пятницу", want: "2026-08-28"},
		{slot: "future_day", raw: "the 10th", want: "2026-09-10"},
		{slot: "future_day", raw: "вчера", msg: "in the past"},
		{slot: "future_day", raw: "2026-08-01", msg: "in the past"},
		// Relative days are checked, never moved to the allowed side.
		{slot: "past_day", raw: "через два дня", msg: "the date is in the future; a date on or before 2026-08-24", format: "YYYY-MM-DD"},
		{slot: "past_day", raw: "in 2 days", msg: "in the future"},
		{slot: "past_day", raw: "Послезавтра", msg: "in the future"},
		{slot: "past_day", raw: "через тиждень", msg: "in the future"},
		{slot: "past_day", raw: "два дні тому", want: "2026-08-22"},
		{slot: "past_day", raw: "tonight", want: "2026-08-24"},
		{slot: "past_day", raw: "сегодня в 17:30", want: "2026-08-24"}, // later than noon, still today
		{slot: "past_day", raw: "earlier today", want: "2026-08-24"},
		{slot: "future_day", raw: "два дня назад", msg: "the date is in the past; a date on or after 2026-08-24", format: "YYYY-MM-DD"},
		{slot: "future_day", raw: "3 days ago", msg: "in the past"},
		{slot: "future_day", raw: "через тиждень", want: "2026-08-31"},
		{slot: "future_day", raw: "later today", want: "2026-08-24"},
		{slot: "future_day", raw: "сегодня утром", want: "2026-08-24"}, // the morning has passed at noon, the day has not
	})
}

func TestNormalizerTime(t *testing.T) {
	t.Parallel()
	const form = "HH:MM"
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "at", raw: "6:15 pm", want: "18:15"},
		{slot: "at", raw: "6:15PM", want: "18:15"},
		{slot: "at", raw: "19:30", want: "19:30"},
		{slot: "at", raw: "7 вечера", want: "19:00"},
		{slot: "at", raw: "в половине седьмого вечера", want: "18:30"},
		{slot: "at", raw: "полседьмого", want: "06:30"},
		{slot: "at", raw: "о 19:30", want: "19:30"},
		{slot: "at", raw: "о пів на сьому вечора", want: "18:30"},
		{slot: "at", raw: "о сьомій", want: "07:00"},
		{slot: "at", raw: "half past 6 in the evening", want: "18:30"},
		{slot: "at", raw: "2 o'clock in the afternoon", want: "14:00"},
		{slot: "at", raw: "noon", want: "12:00"},
		{slot: "at", raw: "midnight", want: "00:00"},
		{slot: "at", raw: "полдень", want: "12:00"},
		{slot: "at", raw: "12 am", want: "00:00"},
		{slot: "at", raw: "12 p.m.", want: "12:00"},
		{slot: "at", raw: "11 ночи", want: "23:00"},
		{slot: "at", raw: "2 ночи", want: "02:00"},
		{slot: "at", raw: "в 3 дня", want: "15:00"},
		{slot: "at", raw: "quarter to 8", want: "07:45"},
		{slot: "at", raw: "без четверти восемь", want: "07:45"},
		{slot: "at", raw: "четверть восьмого", want: "07:15"},
		{slot: "at", raw: "ten past six", want: "06:10"},
		{slot: "at", raw: "seven thirty pm", want: "19:30"},
		{slot: "at", raw: "19.30", want: "19:30"},
		{slot: "at", raw: "7:05 a.m.", want: "07:05"},
		{slot: "at", raw: "25:00", msg: "no such time", format: form},
		{slot: "at", raw: "7:75", msg: "no such time", format: form},
		{slot: "at", raw: "19:00 утра", msg: "no such time", format: form},
		{slot: "at", raw: "asap", msg: "not a time", format: form},
		{slot: "at", raw: 1930.0, msg: "time of day as text", format: form},
	})
}

func TestNormalizerAmount(t *testing.T) {
	t.Parallel()
	const form = "1200.50"
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "sum", raw: "1 200,50 ₽", want: "1200.50"},
		{slot: "sum", raw: "1\u00a0200,50\u00a0₽", want: "1200.50"},
		{slot: "sum", raw: "1,200.50", want: "1200.50"},
		{slot: "sum", raw: "1.200,50 €", want: "1200.50"},
		{slot: "sum", raw: "1200.5 руб.", want: "1200.50"},
		{slot: "sum", raw: "$1,200", want: "1200.00"},
		{slot: "sum", raw: "1 200 грн", want: "1200.00"},
		{slot: "sum", raw: "1.200 ₽", want: "1200.00"}, // one separator before three digits groups thousands, "." or ","
		{slot: "sum", raw: "1,200", want: "1200.00"},
		{slot: "sum", raw: "1200.500", want: "1200.50"}, // canonical scale: no needless re-confirmation
		{slot: "sum", raw: "1,2 тыс. руб", want: "1200.00"},
		{slot: "sum", raw: "5k", want: "5000.00"},
		{slot: "sum", raw: "RUB 99,9", want: "99.90"},
		{slot: "sum", raw: "US$ 15", want: "15.00"},
		{slot: "sum", raw: "1'200.50", want: "1200.50"},
		{slot: "sum", raw: "12,5", want: "12.50"},
		{slot: "sum", raw: "-5", want: "-5.00"}, // this slot sets no minimum
		{slot: "sum", raw: 1200.5, want: "1200.50"},
		{slot: "sum", raw: json.Number("1200.50"), want: "1200.50"},
		{slot: "sum", raw: 0.1, want: "0.10"},
		{slot: "yen", raw: "1,200 JPY", want: "1200"},
		{slot: "sum", raw: "1200.505", msg: "more than 2 decimal places", format: form},
		{slot: "yen", raw: "12.50", msg: "whole amount"},
		{slot: "sum", raw: "1 200 50", msg: "not an amount", format: form},
		{slot: "sum", raw: "1.2.3", msg: "not an amount"},
		{slot: "sum", raw: "двести", msg: "not an amount", format: form},
		{slot: "sum", raw: "₽", msg: "not an amount"},
		{slot: "sum", raw: "--5", msg: "not an amount"},
		{slot: "sum", raw: "$5 €", msg: "two different currencies"},
		{slot: "sum", raw: true, msg: "expected an amount"},
		{slot: "rub", raw: "$1,200", msg: "in USD, but this tool takes amounts in RUB", format: "in RUB"},
		{slot: "rub", raw: "1 200 грн", msg: "in UAH"},
		{slot: "rub", raw: "0", msg: "exclusiveMinimum", format: "more than 0"},
		{slot: "rub", raw: "-1 200,50 ₽", msg: "exclusiveMinimum"},
	})
}

func TestNormalizerInteger(t *testing.T) {
	t.Parallel()
	const form = "whole number"
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "count", raw: "two", want: 2.0},
		{slot: "count", raw: "Two people", want: 2.0},
		{slot: "count", raw: "двое", want: 2.0},
		{slot: "count", raw: "двоє", want: 2.0},
		{slot: "count", raw: "4 человека", want: 4.0},
		{slot: "count", raw: "4", want: 4.0},
		{slot: "count", raw: 4.0, want: 4.0},
		{slot: "count", raw: json.Number("3"), want: 3.0},
		{slot: "count", raw: "на двоих", want: 2.0},
		{slot: "count", raw: "for 3 adults", want: 3.0},
		{slot: "count", raw: "троє дорослих", want: 3.0},
		{slot: "count", raw: "четверо", want: 4.0},
		{slot: "count", raw: "на 4-х", want: 4.0},
		{slot: "count", raw: "table for two, please", want: 2.0},
		{slot: "count", raw: "п'ятеро", want: 5.0},
		{slot: "count", raw: "twenty", want: 20.0},
		{slot: "count", raw: "a couple", want: 2.0},
		{slot: "count", raw: "одна", want: 1.0},
		{slot: "count", raw: "twenty-one", msg: "maximum", format: "at most 20"},
		{slot: "count", raw: "2.5", msg: "not a whole number", format: form},
		{slot: "count", raw: 2.5, msg: "not a whole number", format: form},
		{slot: "count", raw: "2 adults and 1 child", msg: "more than one number", format: form},
		{slot: "count", raw: "many", msg: "not a count", format: form},
		{slot: "count", raw: "0", msg: "minimum", format: "at least 1"},
		{slot: "count", raw: true, msg: "not a count"},
	})
}

func TestNormalizerLastDigits(t *testing.T) {
	t.Parallel()
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "card", raw: "•• 4417", want: "4417"},
		{slot: "card", raw: "**** **** **** 4417", want: "4417"},
		{slot: "card", raw: "карта 4417", want: "4417"},
		{slot: "card", raw: "card ending in 4417", want: "4417"},
		{slot: "card", raw: "4276 1234 5678 4417", want: "4417"},
		{slot: "card", raw: "4276-1234-5678-4417", want: "4417"},
		{slot: "card", raw: "*4417", want: "4417"},
		{slot: "card", raw: "Visa •••• 4417", want: "4417"},
		{slot: "card", raw: "44\u200b17", want: "4417"},
		{slot: "card", raw: "картка, що закінчується на 4417.", want: "4417"},
		{slot: "card", raw: 4417.0, want: "4417"},
		{slot: "card", raw: 17.0, want: "0017"},
		{slot: "acct", raw: "счёт 40817810000000123456", want: "123456"},
		{slot: "acct", raw: "№ 123456", want: "123456"},
		{slot: "acct", raw: "•• 4417", msg: "found 4 digits, need 6", format: "last six digits"},
		{slot: "card", raw: "44", msg: "found 2 digits, need 4", format: "last four digits"},
		{slot: "card", raw: "моя карта", msg: "found 0 digits"},
		{slot: "card", raw: 44.17, msg: "expected digits"},
		{slot: "card", raw: -4417.0, msg: "expected digits"},
		{slot: "card", raw: false, msg: "expected digits"},
	})
}

func TestNormalizerEnum(t *testing.T) {
	t.Parallel()
	reasons := []string{"duplicate", "fraud", "not_received", "wrong_amount"}
	c := kitchen(t)
	runDirty(t, c, monday(t, "en"), []dirty{
		{slot: "kind", raw: "Duplicate", want: "duplicate"},
		{slot: "kind", raw: " DUPLICATE ", want: "duplicate"},
		{slot: "kind", raw: "not-received", want: "not_received"},
		{slot: "kind", raw: "Not Received", want: "not_received"},
		{slot: "kind", raw: "wrong amount", want: "wrong_amount"},
		{slot: "kind", raw: "WRONG-AMOUNT", want: "wrong_amount"},
		{slot: "kind", raw: "dupli\u200bcate", want: "duplicate"},
		{slot: "kind", raw: "'duplicate'", want: "duplicate"},
		{slot: "kind", raw: "not_received.", want: "not_received"},
		{slot: "kind", raw: "дубль", want: "duplicate"},
		{slot: "kind", raw: "двойное списание", want: "duplicate"},
		{slot: "kind", raw: "Двойное\u00a0Списание", want: "duplicate"},
		{slot: "kind", raw: "списали дважды", want: "duplicate"},
		{slot: "kind", raw: "двічі списали", want: "duplicate"},
		{slot: "kind", raw: "не я", want: "fraud"},
		{slot: "kind", raw: "Мошенничество", want: "fraud"},
		{slot: "kind", raw: "chargeback", msg: "must be one of", format: strings.Join(reasons, ", ")},
		{slot: "kind", raw: 3.0, msg: "want string"},
		{slot: "kind", raw: []any{"duplicate"}, msg: "want string"},
	})
	// The allowed values a refusal lists are a copy: changing them does
	// not change the contract.
	_, fe := c.Normalize("kind", "chargeback", monday(t, "en"))
	if !reflect.DeepEqual(fe.Allowed, reasons) {
		t.Fatalf("allowed = %v, want %v", fe.Allowed, reasons)
	}
	fe.Allowed[0] = "changed"
	if got := c.Property("kind").Enum[0]; got != "duplicate" {
		t.Errorf("changing a refusal's allowed values changed the contract's enum to %q", got)
	}
	allowed := c.Property("kind").AllowedValues()
	allowed[0] = "changed"
	if got := c.Property("kind").Enum[0]; got != "duplicate" {
		t.Errorf("AllowedValues shares the contract's enum: %q", got)
	}
}

func TestNormalizerIATA(t *testing.T) {
	t.Parallel()
	const form = "a three-letter IATA code such as MAD"
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "airport", raw: "mad", want: "MAD"},
		{slot: "airport", raw: "MAD", want: "MAD"},
		{slot: "airport", raw: " kbp ", want: "KBP"},
		{slot: "airport", raw: "Lhr", want: "LHR"},
		{slot: "airport", raw: "\u00a0jfk\u200b", want: "JFK"},
		{slot: "airport", raw: "Madrid (MAD)", want: "MAD"},
		{slot: "airport", raw: "MAD - Madrid Barajas", want: "MAD"},
		{slot: "airport", raw: "Kyiv Boryspil (KBP)", want: "KBP"},
		{slot: "airport", raw: "JFK airport", want: "JFK"},
		{slot: "airport", raw: "Madrid", msg: "a city name cannot be turned into one", format: form},
		{slot: "airport", raw: "Kyiv", msg: "not an IATA airport code", format: form},
		{slot: "airport", raw: "Мадрид", msg: "not an IATA airport code", format: form},
		{slot: "airport", raw: "МАД", msg: "not an IATA airport code", format: form},
		{slot: "airport", raw: "KB", msg: "not an IATA airport code", format: form},
		{slot: "airport", raw: "MAD or BCN", msg: "not an IATA airport code", format: form},
		{slot: "airport", raw: 123.0, msg: "airport code as text", format: form},
	})
}

func TestNormalizerText(t *testing.T) {
	t.Parallel()
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "note", raw: "\u00a0OP-12345\u200b", want: "OP-12345"},
		{slot: "note", raw: "  op \t 1 ", want: "op 1"},
		{slot: "note", raw: "Пе\u0438\u0306", want: "Пей"}, // composed to NFC
		{slot: "note", raw: "line\none", want: "line one"},
		{slot: "note", raw: "\ufeffbom first", want: "bom first"},
		{slot: "note", raw: "soft\u00adhyphen", want: "softhyphen"},
		{slot: "note", raw: "\u202eRTL\u202c mark", want: "RTL mark"},
		{slot: "note", raw: "word\u2060joiner", want: "wordjoiner"},
		{slot: "note", raw: "narrow\u202fspace", want: "narrow space"},
		{slot: "note", raw: "ideographic\u3000sp", want: "ideographic sp"},
		{slot: "note", raw: "e\u0301te\u0301", want: "été"},
		{slot: "note", raw: "ok", want: "ok"},
		{slot: "note", raw: "\r\n\tcrlf\r\n", want: "crlf"},
		{slot: "note", raw: "a\u200cb", want: "ab"},
		{slot: "note", raw: " a\u200bb ", want: "ab"},
		{slot: "note", raw: " a\u200b ", msg: "minLength"},
		{slot: "note", raw: strings.Repeat("x", 21), msg: "maxLength", format: "2 to 20 characters"},
		{slot: "note", raw: 12345.0, msg: "want string"},
	})
}

func TestNormalizerCurrency(t *testing.T) {
	t.Parallel()
	runDirty(t, kitchen(t), monday(t, "en"), []dirty{
		{slot: "cur", raw: "₽", want: "RUB"},
		{slot: "cur", raw: "руб.", want: "RUB"},
		{slot: "cur", raw: "рублей", want: "RUB"},
		{slot: "cur", raw: "rub", want: "RUB"},
		{slot: "cur", raw: "$", want: "USD"},
		{slot: "cur", raw: "Dollars", want: "USD"},
		{slot: "cur", raw: "usd", want: "USD"},
		{slot: "cur", raw: "€", want: "EUR"},
		{slot: "cur", raw: "евро", want: "EUR"},
		{slot: "cur", raw: "євро", want: "EUR"},
		{slot: "cur", raw: "грн", want: "UAH"},
		{slot: "cur", raw: "гривні", want: "UAH"},
		{slot: "cur", raw: "₴", want: "UAH"},
		{slot: "cur", raw: "£", want: "GBP"},
		{slot: "cur", raw: " Uah ", want: "UAH"},
		{slot: "cur", raw: "JPY", msg: "must be one of"},
		{slot: "cur", raw: "money", msg: "not a currency", format: "one of: RUB, USD, EUR, UAH, GBP"},
		{slot: "cur", raw: 5.0, msg: "not a currency"},
	})
}

func TestNormalizeArgsFillsTheCurrencySlot(t *testing.T) {
	t.Parallel()
	c := kitchen(t)
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		errPtrs []string
		errMsg  string
	}{
		{"a dollar sign fills the currency", map[string]any{"price": "$1,200"}, map[string]any{"price": "1200.00", "cur": "USD"}, nil, ""},
		{"a rouble word fills it", map[string]any{"price": "1 200 рублей"}, map[string]any{"price": "1200.00", "cur": "RUB"}, nil, ""},
		{"the same currency twice is fine", map[string]any{"price": "€ 99", "cur": "eur"}, map[string]any{"price": "99.00", "cur": "EUR"}, nil, ""},
		{"no sign: only the given currency", map[string]any{"price": "99", "cur": "₴"}, map[string]any{"price": "99.00", "cur": "UAH"}, nil, ""},
		{"no sign and no currency", map[string]any{"price": "99"}, map[string]any{"price": "99.00"}, nil, ""},
		{"a contradiction is refused", map[string]any{"price": "1 200 ₽", "cur": "EUR"}, map[string]any{"cur": "EUR"}, []string{"/price"}, "in RUB, but the currency given is EUR"},
		{"a currency the slot does not take", map[string]any{"price": "1000 ₸"}, map[string]any{}, []string{"/price"}, "KZT"},
		{"a refused currency argument keeps its own error", map[string]any{"price": "$5", "cur": "money"}, map[string]any{"price": "5.00"}, []string{"/cur"}, "not a currency"},
		{"nulls and blanks are left out", map[string]any{"price": nil, "cur": " ", "note": "\u200b"}, map[string]any{}, nil, ""},
		{"an unknown argument", map[string]any{"card_number": "4276 1234 5678 4417", "note": "hi"}, map[string]any{"note": "hi"}, []string{"/card_number"}, "unknown argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, errs := c.NormalizeArgs(tt.args, monday(t, "en"))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("values = %v, want %v", got, tt.want)
			}
			var ptrs []string
			for _, e := range errs {
				ptrs = append(ptrs, e.Pointer)
				if tt.errMsg != "" && !strings.Contains(e.Message, tt.errMsg) {
					t.Errorf("error %v does not say %q", e, tt.errMsg)
				}
				assertNoCard(t, e)
			}
			if !reflect.DeepEqual(ptrs, tt.errPtrs) {
				t.Errorf("errors at %v, want %v (%v)", ptrs, tt.errPtrs, errs)
			}
		})
	}
}
