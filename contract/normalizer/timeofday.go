package normalizer

import (
	"fmt"
	"regexp"
	"strings"
)

// Times of day in ru, uk and en become "HH:MM" on a 24-hour clock: "6:15
// pm" → 18:15, "7 вечера" → 19:00, "в половине седьмого вечера" → 18:30,
// "о пів на сьому" → 06:30, "half past 6 in the evening" → 18:30, "2
// o'clock in the afternoon" → 14:00, "noon" → 12:00. A part of the day
// that contradicts a 24-hour time ("19:00 утра") is refused.

var (
	hhmm     = regexp.MustCompile(`^(\d{1,2})[:.\-h](\d{2})$`)
	hhmmRaw  = regexp.MustCompile(`^(\d{2})(\d{2})$`)
	ampmGlue = regexp.MustCompile(`(\d)(am|pm)\b`)
	ampmDots = regexp.MustCompile(`\b([ap])\.\s?m\b\.?`)
	hourTok  = regexp.MustCompile(`^(\d{1,2})(?:-?(?:ю|й|ой|ти|ми|ть|ть|м))?$`)
)

// fixed are the times named by a word.
var fixedTimes = map[string]string{
	"noon": "12:00", "midday": "12:00", "полдень": "12:00", "в полдень": "12:00", "полудень": "12:00", "опівдні": "12:00",
	"о полудні": "12:00", "midnight": "00:00", "полночь": "00:00", "в полночь": "00:00", "північ": "00:00", "опівночі": "00:00",
	"at noon": "12:00", "at midnight": "00:00", "12 noon": "12:00", "12 midnight": "00:00",
}

// dayParts say which half of the day an hour is in.
var dayParts = map[string]byte{
	"am": 'm', "morning": 'm', "утра": 'm', "утром": 'm', "ранку": 'm', "зранку": 'm', "вранці": 'm', "ранок": 'm',
	"pm": 'a', "afternoon": 'a', "дня": 'a', "днем": 'a', "дня,": 'a', "вдень": 'a', "пополудні": 'a', "після обіду": 'a',
	"evening": 'e', "tonight": 'e', "вечера": 'e', "вечером": 'e', "вечора": 'e', "ввечері": 'e', "увечері": 'e',
	"night": 'n', "ночи": 'n', "ночью": 'n', "ночі": 'n', "вночі": 'n', "уночі": 'n',
}

var timeFillers = map[string]bool{
	"at": true, "around": true, "about": true, "the": true, "in": true, "a": true, "в": true, "во": true, "о": true, "об": true,
	"у": true, "около": true, "близько": true, "ровно": true, "рівно": true, "час": true, "часа": true, "часов": true,
	"ч": true, "год": true, "години": true, "годині": true, "годину": true, "мин": true, "минут": true, "хв": true,
	"хвилин": true, "o'clock": true, "oclock": true, "hours": true, "h": true, "sharp": true, "approximately": true,
	"time": true, "время": true, "час:": true,
}

// hourOrdinals are the ordinal hour words: genitive ru ("половина
// седьмого") and accusative uk ("пів на сьому") name the hour that is
// coming; locative uk ("о сьомій") names the hour itself.
var hourOrdinals = map[string]int{
	"первого": 1, "второго": 2, "третьего": 3, "четвертого": 4, "пятого": 5, "шестого": 6, "седьмого": 7,
	"восьмого": 8, "девятого": 9, "десятого": 10, "одиннадцатого": 11, "двенадцатого": 12,
	"першу": 1, "другу": 2, "третю": 3, "четверту": 4, "п'яту": 5, "шосту": 6, "сьому": 7, "восьму": 8,
	"дев'яту": 9, "десяту": 10, "одинадцяту": 11, "дванадцяту": 12,
	"першої": 1, "другої": 2, "третьої": 3, "четвертої": 4, "п'ятої": 5, "шостої": 6, "сьомої": 7, "восьмої": 8,
	"дев'ятої": 9, "десятої": 10, "одинадцятої": 11, "дванадцятої": 12,
}

var hourLocatives = map[string]int{
	"першій": 1, "другій": 2, "третій": 3, "четвертій": 4, "п'ятій": 5, "шостій": 6, "сьомій": 7, "восьмій": 8,
	"дев'ятій": 9, "десятій": 10, "одинадцятій": 11, "дванадцятій": 12,
}

// minuteGenitives follow "без" in ru: "без десяти семь".
var minuteGenitives = map[string]int{
	"пяти": 5, "десяти": 10, "пятнадцати": 15, "двадцати": 20, "двадцати пяти": 25, "четверти": 15,
}

var timeWords = map[string]byte{
	"half": 'H', "половине": 'H', "половина": 'H', "пол": 'H', "пів": 'H', "півна": 'H', "полвина": 'H',
	"quarter": 'Q', "четверть": 'Q', "чверть": 'Q',
	"past": 'P', "after": 'P',
	"to": 'B', "till": 'B', "before": 'B', "без": 'B',
	"на": 'A',
}

// Time reads a time of day as models send it and returns it as HH:MM on a
// 24-hour clock.
func Time(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", refuse("time.not_text")
	}
	return clockOf(dateKey(s))
}

// clockOf reads a time of day from a key dateKey made, as "HH:MM".
func clockOf(key string) (string, error) {
	if t, ok := fixedTimes[key]; ok {
		return t, nil
	}
	h, m, err := parseTime(spaceAMPM(key))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%02d:%02d", h, m), nil
}

// spaceAMPM writes "p.m." and "6pm" as "pm" and "6 pm".
func spaceAMPM(key string) string {
	key = ampmDots.ReplaceAllString(key, "${1}m")
	return ampmGlue.ReplaceAllString(key, "$1 $2")
}

type timeToken struct {
	kind byte // T hh:mm, N number, O coming-hour ordinal, L hour locative, H half, Q quarter, P past, B to, A на
	h, m int
}

// parseTime reads the hour and minute of a key: its words become tokens,
// the order of the tokens says which is the hour and which the minute, and a
// part of the day moves the hour onto the 24-hour clock.
func parseTime(key string) (int, int, error) {
	toks, part, err := timeTokens(strings.FieldsFunc(key, func(r rune) bool { return r == ' ' || r == ',' }))
	if err != nil {
		return 0, 0, err
	}
	h, m, ok := clockFromTokens(toks)
	if !ok {
		return 0, 0, refuse("time.not_time")
	}
	if h < 0 {
		h += 12
	}
	if m < 0 || m > 59 || h > 23 {
		return 0, 0, refuse("time.no_such")
	}
	h, ok = onTheClock(h, part)
	if !ok {
		return 0, 0, refuse("time.no_such")
	}
	return h, m, nil
}

// timeTokens reads the words of a time of day into tokens and the part of
// the day they name ('m', 'a', 'e', 'n' or 0); two parts that disagree, or a
// word that belongs to no time, refuse it.
func timeTokens(fields []string) ([]timeToken, byte, error) {
	var toks []timeToken
	part := byte(0)
	for _, f := range fields {
		f = strings.Trim(f, "!?;:")
		if f != "." {
			f = strings.TrimSuffix(f, ".")
		}
		if f == "" || timeFillers[f] {
			continue
		}
		if p, ok := dayParts[f]; ok {
			if part != 0 && part != p {
				return nil, 0, refuse("time.not_time")
			}
			part = p
			continue
		}
		more, ok := timeWord(f, toks)
		if !ok {
			return nil, 0, refuse("time.not_time")
		}
		toks = more
	}
	return toks, part, nil
}

// timeWord adds the tokens of one word of a time to toks; ok is false for a
// word that is no part of a time.
func timeWord(f string, toks []timeToken) ([]timeToken, bool) {
	if m := hhmm.FindStringSubmatch(f); m != nil {
		return append(toks, timeToken{kind: 'T', h: atoi(m[1]), m: atoi(m[2])}), true
	}
	if m := hhmmRaw.FindStringSubmatch(f); m != nil {
		return append(toks, timeToken{kind: 'T', h: atoi(m[1]), m: atoi(m[2])}), true
	}
	if m := hourTok.FindStringSubmatch(f); m != nil {
		return append(toks, timeToken{kind: 'N', h: atoi(m[1])}), true
	}
	if k, ok := timeWords[f]; ok {
		return append(toks, timeToken{kind: k}), true
	}
	if h, ok := hourOrdinals[f]; ok {
		return append(toks, timeToken{kind: 'O', h: h}), true
	}
	if h, ok := hourLocatives[f]; ok {
		return append(toks, timeToken{kind: 'L', h: h}), true
	}
	if strings.HasPrefix(f, "пол") {
		rest := strings.TrimPrefix(strings.TrimPrefix(f, "пол"), "-")
		if h, ok := hourOrdinals[rest]; ok {
			return append(toks, timeToken{kind: 'H'}, timeToken{kind: 'O', h: h}), true
		}
	}
	if n, ok := minuteGenitives[f]; ok {
		return append(toks, timeToken{kind: 'N', h: n}), true
	}
	return numberWord(f, toks)
}

// numberWord adds a number written in words: "seven", "сорок пять" (the
// units join the tens before them), "forty-five".
func numberWord(f string, toks []timeToken) ([]timeToken, bool) {
	if n, ok := countWords[f]; ok {
		if last := len(toks) - 1; last >= 0 && toks[last].kind == 'N' && toks[last].h >= 20 && toks[last].h%10 == 0 && n < 10 {
			toks[last].h += n
			return toks, true
		}
		return append(toks, timeToken{kind: 'N', h: n}), true
	}
	if a, b, cut := strings.Cut(f, "-"); cut {
		na, okA := countWords[a]
		nb, okB := countWords[b]
		if okA && okB && na >= 20 && nb < 10 {
			return append(toks, timeToken{kind: 'N', h: na + nb}), true
		}
	}
	return toks, false
}

// clockFromTokens reads the hour and minute from the order of the tokens:
// "7 30", "half past 6", "без четверти восемь", "пів на сьому". The hour
// before 0 ("quarter to zero") comes out as -1, which the caller turns into
// 11.
func clockFromTokens(toks []timeToken) (h, m int, ok bool) {
	sig := make([]byte, len(toks))
	for i, t := range toks {
		sig[i] = t.kind
	}
	switch string(sig) {
	case "T":
		return toks[0].h, toks[0].m, true
	case "N", "L":
		return toks[0].h, 0, true
	case "NN", "LN":
		return toks[0].h, toks[1].h, true
	case "HPN":
		return toks[2].h, 30, true
	case "QPN":
		return toks[2].h, 15, true
	case "NPN":
		return toks[2].h, toks[0].h, true
	case "QBN":
		return toks[2].h - 1, 45, true
	case "NBN":
		return toks[2].h - 1, 60 - toks[0].h, true
	case "BQN", "BNN":
		return toks[2].h - 1, 60 - minuteOf(toks[1]), true
	case "HO", "HAO":
		return toks[len(toks)-1].h - 1, 30, true
	case "QO", "QAO":
		return toks[len(toks)-1].h - 1, 15, true
	}
	return 0, 0, false
}

// onTheClock moves an hour said with a part of the day onto the 24-hour
// clock: "7 вечера" is 19, "12 am" is 0, "2 ночи" is 2 and "11 ночи" 23; a
// morning hour past noon ("19:00 утра") is no time at all.
func onTheClock(h int, part byte) (int, bool) {
	switch part {
	case 'm':
		if h > 12 {
			return 0, false
		}
		if h == 12 {
			h = 0
		}
	case 'a', 'e':
		if h < 12 {
			h += 12
		}
	case 'n':
		switch {
		case h == 12:
			h = 0
		case h >= 6 && h < 12:
			h += 12
		}
	}
	return h, true
}

func minuteOf(t timeToken) int {
	if t.kind == 'Q' {
		return 15
	}
	return t.h
}
