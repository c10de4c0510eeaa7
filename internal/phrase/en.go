package phrase

import "golang.org/x/text/feature/plural"

// english is every sentence and counted noun slotd says in English.
var english = words{
	texts: map[string]string{
		// A refused value: what the call named or held.
		"card.full":        "a full card number: never send one; only the last four digits of a card are ever needed",
		"unknown_argument": "unknown argument",
		"fmt.arguments":    "one of the tool's arguments",

		// Dates (normalizer date).
		"date.not_text": "expected a date as text",
		"date.not_date": "not a date slotd can read",
		"date.no_such":  "no such date",
		"date.future":   "the date is in the future; a date on or before {day} is expected",
		"date.too_far":  "more than {days} days from today; write the date itself",
		"date.past":     "the date is in the past; a date on or after {day} is expected",
		"fmt.date":      "a date as YYYY-MM-DD, e.g. 2026-08-22; words such as yesterday, tonight, in 2 days, next Friday or 15 December are understood",

		// Times of day (normalizer time).
		"time.not_text": "expected a time of day as text",
		"time.not_time": "not a time of day slotd can read",
		"time.no_such":  "no such time of day",
		"fmt.time":      "a time of day as HH:MM on a 24-hour clock, e.g. 18:30",

		// Amounts and currencies (normalizers amount and currency).
		"amount.not_number":     "expected an amount",
		"amount.not_amount":     "not an amount",
		"amount.decimals":       "more than {decimals} decimal places",
		"amount.whole":          "a whole amount without decimals is expected",
		"fmt.amount_in":         "an amount in {currency} such as 1200.50 (spaces between thousands are fine)",
		"currency.wrong":        "the amount is in {currency}, but this tool takes amounts in {accepted}",
		"currency.two":          "two different currencies in one amount",
		"currency.conflict":     "the amount is in {currency}, but the currency given is {given}",
		"currency.unsupported":  "the amount is in {currency}, a currency this tool does not take",
		"currency.not_currency": "not a currency",
		"fmt.amount":            "an amount such as 1200.50 (a currency sign or spaces between thousands are fine)",
		"fmt.currency":          "an ISO 4217 currency code such as RUB, USD or EUR",

		// Counts (normalizer integer).
		"count.not_count": "not a count",
		"count.not_whole": "not a whole number",
		"count.ambiguous": "more than one number; say one count",
		"fmt.integer":     "a whole number such as 2 (words such as two or двое are understood)",

		// The last digits of a card (normalizer last4).
		"digits.not_digits": "expected digits",
		"digits.found":      "found {found} digits, need {need}",
		"fmt.digits":        "the last {count} digits of the card or account, e.g. {example}",

		// Airport codes (normalizer iata).
		"iata.not_text": "expected an airport code as text",
		"iata.city":     "not an IATA airport code; a city name cannot be turned into one here",
		"fmt.iata":      "a three-letter IATA code such as MAD",

		// Accepted forms of enums and standard formats.
		"fmt.enum":             "one of: {values}",
		"fmt.format":           "a valid {format}",
		"fmt.format.date-time": "a date and time as RFC 3339, e.g. 2026-08-22T18:30:00+03:00",
		"fmt.format.email":     "an e-mail address such as name@example.com",
		"fmt.format.uuid":      "a UUID such as 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"fmt.format.uri":       "an absolute URI such as https://example.com/a",
		"fmt.format.time":      "a time as HH:MM:SS with an offset, e.g. 18:30:00+03:00",

		// A failed keyword of a property's schema.
		"schema.type":       "want {want}, got {got}",
		"schema.enum":       "must be one of: {values}",
		"schema.const":      "must be {value}",
		"schema.minimum":    "minimum: want at least {limit}",
		"schema.maximum":    "maximum: want at most {limit}",
		"schema.xminimum":   "exclusiveMinimum: want more than {limit}",
		"schema.xmaximum":   "exclusiveMaximum: want less than {limit}",
		"schema.multiple":   "multipleOf: want a multiple of {divisor}",
		"schema.minLength":  "minLength: want at least {limit} characters, got {length}",
		"schema.maxLength":  "maxLength: want at most {limit} characters, got {length}",
		"schema.pattern":    "does not match pattern '{pattern}'",
		"schema.format":     "is not a valid {format}",
		"schema.required":   "missing properties: {names}",
		"schema.additional": "unknown arguments: {names}",
		"schema.minItems":   "minItems: want at least {limit} items",
		"schema.maxItems":   "maxItems: want at most {limit} items",
		"schema.not":        "must not be: {rule}",
		"schema.false":      "is not allowed here",
		"schema.anyOf":      "must satisfy one of: {alternatives}",
		"schema.oneOf":      "must satisfy exactly one of: {alternatives}",

		// Cross-field rules.
		"rule.when":       "when {condition}: {rule}",
		"rule.otherwise":  "unless {condition}: {rule}",
		"rule.must":       "{name} must be: {requirement}",
		"rule.is":         "{name} is {value}",
		"rule.one_of":     "{name} is one of {values}",
		"rule.given":      "{name} is given",
		"rule.required":   "{name} is required",
		"rule.not":        "not ({rule})",
		"rule.and":        " and ",
		"rule.or":         " or ",
		"rule.alt":        "({n}) {rule}",
		"rule.cond_bound": "{name} is {bounds}",

		// Bounds, lengths and patterns in words.
		"words.more_than": "more than {limit}",
		"words.at_least":  "at least {limit}",
		"words.at_most":   "at most {limit}",
		"words.less_than": "less than {limit}",
		"words.multiple":  "a multiple of {limit}",
		"words.len_range": "{min} to {max} characters",
		"words.len_min":   "at least {min} characters",
		"words.len_max":   "at most {max} characters",
		"words.len_exact": "exactly {n} characters",
		"words.pattern":   "matching the pattern {pattern}",
		"words.then":      ", then ",
		"words.exactly":   "{n} {noun}",
		"words.range":     "{min} to {max} {noun}",
		"words.or_more":   "{min} or more {nouns}",
		"words.any":       "any number of {nouns}",
		"words.optional":  "optionally {noun}",

		// The number of digits a card slot keeps: "the last four digits".
		"digits.number.1":  "one",
		"digits.number.2":  "two",
		"digits.number.3":  "three",
		"digits.number.4":  "four",
		"digits.number.5":  "five",
		"digits.number.6":  "six",
		"digits.number.7":  "seven",
		"digits.number.8":  "eight",
		"digits.number.9":  "nine",
		"digits.number.10": "ten",
		"digits.count":     "{number}",

		// JSON Schema types.
		"type.string":  "string",
		"type.number":  "number",
		"type.integer": "integer",
		"type.boolean": "boolean",
		"type.object":  "object",
		"type.array":   "array",
		"type.null":    "null",

		// The next step of a turn: questions, summaries and notices.
		"step.ask":                "Please tell me the {label}.",
		"step.reconfirm":          "{label}: it was {old}, now {new}. Shall I change it?",
		"step.overwritten":        "Got it, changing the {label} to {new}.",
		"step.confirm":            "Please check that this is right: {summary}.",
		"step.resume":             "Here is where we stopped: {summary}. Shall we go on from there?",
		"step.resume_empty":       "We were interrupted. Shall we go on?",
		"step.handoff":            "A person will take over from here. Known so far: {summary}. Could not settle: {label}.",
		"notice.cancelled":        "All right, nothing will be done.",
		"notice.expired":          "The previous conversation expired; starting over.",
		"notice.restarted":        "All right, starting over.",
		"notice.closed":           "The previous conversation was closed; starting over.",
		"notice.resumed":          "Back to {tool}: {summary}; still needed: {missing}.",
		"notice.resumed_complete": "Back to {tool}: {summary}.",
		"notice.closed_others":    "Closing what was left unfinished: {tools}.",
		"failure.retry":           "Nothing was done yet; retrying is safe in {seconds} seconds.",
		"failure.handoff":         "Nothing was done; a person will take over.",

		// Values as a user reads them in a sentence: a calendar day in the
		// long form, a yes or a no.
		"value.date":  "{day} {month} {year}",
		"value.true":  "yes",
		"value.false": "no",
		"month.1":     "January",
		"month.2":     "February",
		"month.3":     "March",
		"month.4":     "April",
		"month.5":     "May",
		"month.6":     "June",
		"month.7":     "July",
		"month.8":     "August",
		"month.9":     "September",
		"month.10":    "October",
		"month.11":    "November",
		"month.12":    "December",
	},
	nouns: map[string]noun{
		"digit":       {One: "digit", Other: "digits", Plural: "digits"},
		"upper":       {One: "capital Latin letter", Other: "capital Latin letters", Plural: "capital Latin letters"},
		"lower":       {One: "lower-case Latin letter", Other: "lower-case Latin letters", Plural: "lower-case Latin letters"},
		"latin":       {One: "Latin letter", Other: "Latin letters", Plural: "Latin letters"},
		"alnum":       {One: "Latin letter or digit", Other: "Latin letters or digits", Plural: "Latin letters or digits"},
		"upper_digit": {One: "capital Latin letter or digit", Other: "capital Latin letters or digits", Plural: "capital Latin letters or digits"},
		"cyrillic":    {One: "Cyrillic letter", Other: "Cyrillic letters", Plural: "Cyrillic letters"},
		"any":         {One: "character", Other: "characters", Plural: "characters"},
		"space":       {One: "space", Other: "spaces", Plural: "spaces"},
	},
	afterRange: plural.Other,
}
