package contract

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

func normalizeTime(v any, _ *Property, _ Env) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, refuse("time.not_text")
	}
	t, err := clockOf(dateKey(s))
	if err != nil {
		return nil, err
	}
	return t, nil
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

func parseTime(key string) (int, int, error) {
	fields := strings.FieldsFunc(key, func(r rune) bool { return r == ' ' || r == ',' })
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
				return 0, 0, refuse("time.not_time")
			}
			part = p
			continue
		}
		if m := hhmm.FindStringSubmatch(f); m != nil {
			toks = append(toks, timeToken{kind: 'T', h: atoi(m[1]), m: atoi(m[2])})
			continue
		}
		if m := hhmmRaw.FindStringSubmatch(f); m != nil {
			toks = append(toks, timeToken{kind: 'T', h: atoi(m[1]), m: atoi(m[2])})
			continue
		}
		if m := hourTok.FindStringSubmatch(f); m != nil {
			toks = append(toks, timeToken{kind: 'N', h: atoi(m[1])})
			continue
		}
		if k, ok := timeWords[f]; ok {
			toks = append(toks, timeToken{kind: k})
			continue
		}
		if h, ok := hourOrdinals[f]; ok {
			toks = append(toks, timeToken{kind: 'O', h: h})
			continue
		}
		if h, ok := hourLocatives[f]; ok {
			toks = append(toks, timeToken{kind: 'L', h: h})
			continue
		}
		if strings.HasPrefix(f, "пол") {
			rest := strings.TrimPrefix(strings.TrimPrefix(f, "пол"), "-")
			if h, ok := hourOrdinals[rest]; ok {
				toks = append(toks, timeToken{kind: 'H'}, timeToken{kind: 'O', h: h})
				continue
			}
		}
		if n, ok := minuteGenitives[f]; ok {
			toks = append(toks, timeToken{kind: 'N', h: n})
			continue
		}
		if n, ok := countWords[f]; ok {
			// Number words join: "twenty five", "сорок пять".
			if len(toks) > 0 && toks[len(toks)-1].kind == 'N' && toks[len(toks)-1].h >= 20 && toks[len(toks)-1].h%10 == 0 && n < 10 {
				toks[len(toks)-1].h += n
				continue
			}
			toks = append(toks, timeToken{kind: 'N', h: n})
			continue
		}
		if strings.Contains(f, "-") {
			// "forty-five", "twenty-one"
			a, b, _ := strings.Cut(f, "-")
			na, okA := countWords[a]
			nb, okB := countWords[b]
			if okA && okB && na >= 20 && nb < 10 {
				toks = append(toks, timeToken{kind: 'N', h: na + nb})
				continue
			}
		}
		return 0, 0, refuse("time.not_time")
	}
	sig := make([]byte, len(toks))
	for i, t := range toks {
		sig[i] = t.kind
	}
	var h, m int
	switch string(sig) {
	case "T":
		h, m = toks[0].h, toks[0].m
	case "N":
		h = toks[0].h
	case "NN":
		h, m = toks[0].h, toks[1].h
	case "L":
		h = toks[0].h
	case "LN":
		h, m = toks[0].h, toks[1].h
	case "HPN":
		h, m = toks[2].h, 30
	case "QPN":
		h, m = toks[2].h, 15
	case "NPN":
		h, m = toks[2].h, toks[0].h
	case "QBN":
		h, m = toks[2].h-1, 45
	case "NBN":
		h, m = toks[2].h-1, 60-toks[0].h
	case "BQN", "BNN":
		h, m = toks[2].h-1, 60-minuteOf(toks[1])
	case "HO", "HAO":
		h, m = toks[len(toks)-1].h-1, 30
	case "QO", "QAO":
		h, m = toks[len(toks)-1].h-1, 15
	default:
		return 0, 0, refuse("time.not_time")
	}
	if h < 0 {
		h += 12
	}
	if m < 0 || m > 59 || h > 23 {
		return 0, 0, refuse("time.no_such")
	}
	switch part {
	case 'm':
		if h > 12 {
			return 0, 0, refuse("time.no_such")
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
	return h, m, nil
}

func minuteOf(t timeToken) int {
	if t.kind == 'Q' {
		return 15
	}
	return t.h
}
