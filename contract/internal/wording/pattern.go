package wording

import (
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"

	"github.com/slotd/slotd/internal/phrase"
)

// PatternDigits is how many digits a pattern holds when it holds one count
// of digits and nothing else ("^[0-9]{4}$", "^\\d{6}$"), else 0.
func PatternDigits(pattern string) int {
	atoms, ok := parsePattern(pattern)
	if ok && len(atoms) == 1 && atoms[0].literal == "" && atoms[0].class == classDigit && atoms[0].min == atoms[0].max {
		return atoms[0].min
	}
	return 0
}

// charClass is a kind of character a pattern asks for: the key of its noun
// in the message catalog.
type charClass string

const (
	classDigit      charClass = "digit"
	classUpper      charClass = "upper"
	classLower      charClass = "lower"
	classLatin      charClass = "latin"
	classAlnum      charClass = "alnum"
	classUpperDigit charClass = "upper_digit"
	classCyrillic   charClass = "cyrillic"
	classAny        charClass = "any"
	classSpace      charClass = "space"
)

// Pattern says a simple pattern in words ("^[0-9]{4}$" → "4 digits";
// "^OP-[0-9]{4,10}$" → `"OP-", then 4 to 10 digits`), and a pattern it
// cannot read as "matching the pattern …".
func Pattern(pattern string, lang phrase.Language) string {
	atoms, ok := parsePattern(pattern)
	if !ok || len(atoms) == 0 {
		return phrase.Text(lang, "words.pattern", phrase.Args{"pattern": pattern})
	}
	parts := make([]string, len(atoms))
	for i, a := range atoms {
		parts[i] = a.words(lang)
	}
	return strings.Join(parts, phrase.Text(lang, "words.then", nil))
}

// words says one atom: a literal quoted, a class with its count.
func (a patternAtom) words(lang phrase.Language) string {
	noun := string(a.class)
	switch {
	case a.literal != "":
		return strconv.Quote(a.literal)
	case a.min == a.max:
		return phrase.Text(lang, "words.exactly", phrase.Args{"n": a.min, "noun": phrase.Count(lang, noun, a.min)})
	case a.min == 0 && a.max == 1:
		return phrase.Text(lang, "words.optional", phrase.Args{"noun": phrase.Count(lang, noun, 1)})
	case a.max < 0 && a.min == 0:
		return phrase.Text(lang, "words.any", phrase.Args{"nouns": phrase.Plural(lang, noun)})
	case a.max < 0:
		return phrase.Text(lang, "words.or_more", phrase.Args{"min": a.min, "nouns": phrase.Plural(lang, noun)})
	}
	return phrase.Text(lang, "words.range", phrase.Args{"min": a.min, "max": a.max, "noun": phrase.Ranged(lang, noun)})
}

// patternAtom is one step of a simple pattern: a literal text, or a kind
// of character with how many of it.
type patternAtom struct {
	literal  string
	class    charClass
	min, max int // max -1: unbounded
}

// parsePattern reads an anchored sequence of literals and character
// classes, each class with a count, from the pattern's syntax tree; anything
// else (groups, alternation, look-arounds, case folding, classes slotd has
// no name for) is not read.
func parsePattern(p string) ([]patternAtom, bool) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil, false
	}
	var atoms []patternAtom
	for _, sub := range re.Sub[1 : len(re.Sub)-1] {
		atom, ok := atomOf(sub)
		if !ok {
			return nil, false
		}
		if n := len(atoms); n > 0 && atom.literal != "" && atoms[n-1].literal != "" {
			atoms[n-1].literal += atom.literal // "OP" before an escaped "-"
			continue
		}
		atoms = append(atoms, atom)
	}
	return atoms, true
}

// atomOf reads one node of the concatenation: a literal, or a class with a
// repeat around it.
func atomOf(re *syntax.Regexp) (patternAtom, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || strings.IndexFunc(string(re.Rune), func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return patternAtom{}, false
		}
		return patternAtom{literal: string(re.Rune), min: 1, max: 1}, true
	case syntax.OpStar:
		return counted(re.Sub[0], 0, -1)
	case syntax.OpPlus:
		return counted(re.Sub[0], 1, -1)
	case syntax.OpQuest:
		return counted(re.Sub[0], 0, 1)
	case syntax.OpRepeat:
		return counted(re.Sub[0], re.Min, re.Max)
	}
	return counted(re, 1, 1)
}

// counted is a class repeated min to max times. A repeated literal is not
// read ("a{3}"), but for a space: the parser writes the one-character class
// "[ ]" as the character, and "[ ]{2}" is two spaces.
func counted(re *syntax.Regexp, min, max int) (patternAtom, bool) {
	atom := patternAtom{min: min, max: max}
	switch {
	case re.Op == syntax.OpAnyCharNotNL || re.Op == syntax.OpAnyChar:
		atom.class = classAny
	case re.Op == syntax.OpCharClass:
		cls, ok := classes[string(re.Rune)]
		if !ok {
			return patternAtom{}, false
		}
		atom.class = cls
	case re.Op == syntax.OpLiteral && string(re.Rune) == " " && re.Flags&syntax.FoldCase == 0:
		atom.class = classSpace
	default:
		return patternAtom{}, false
	}
	return atom, true
}

// classes are the character classes slotd has words for, by the ranges the
// parser gives them (lo, hi pairs in order): [0-9] and \d, [A-Za-z] in
// either order, \w with or without the underscore, and so on.
var classes = map[string]charClass{
	"09":         classDigit,
	"AZ":         classUpper,
	"az":         classLower,
	"AZaz":       classLatin,
	"09AZaz":     classAlnum,
	"09AZ__az":   classAlnum,
	"09AZ":       classUpperDigit,
	"ЁЁАяёё":     classCyrillic,
	"Ая":         classCyrillic,
	"\t\n\f\r  ": classSpace,
}
