package phrase

import "golang.org/x/text/feature/plural"

// ukrainian is every sentence and counted noun slotd says in Ukrainian.
var ukrainian = words{
	texts: map[string]string{
		// A refused value: what the call named or held.
		"card.full":        "повний номер картки: його не можна передавати; потрібні лише останні чотири цифри картки",
		"unknown_argument": "невідомий аргумент",
		"fmt.arguments":    "один з аргументів інструмента",

		// Dates (normalizer date).
		"date.not_text": "очікувалася дата рядком",
		"date.not_date": "не вдалося прочитати дату",
		"date.no_such":  "такої дати немає",
		"date.future":   "дата в майбутньому; потрібна дата не пізніше {day}",
		"date.too_far":  "більше {days} днів від сьогодні; напишіть саму дату",
		"date.past":     "дата в минулому; потрібна дата не раніше {day}",
		"fmt.date":      "дата у вигляді YYYY-MM-DD, наприклад 2026-08-22; зрозумілі й слова: вчора, сьогодні ввечері, через 2 дні, наступної п'ятниці, 15 грудня",

		// Times of day (normalizer time).
		"time.not_text": "очікувався час рядком",
		"time.not_time": "не вдалося прочитати час",
		"time.no_such":  "такого часу немає",
		"fmt.time":      "час у вигляді ГГ:ХХ (24 години), наприклад 18:30",

		// Amounts and currencies (normalizers amount and currency).
		"amount.not_number":     "очікувалася сума",
		"amount.not_amount":     "не схоже на суму",
		"amount.decimals":       "більше {decimals} знаків після коми",
		"amount.whole":          "потрібна ціла сума без дробової частини",
		"fmt.amount_in":         "сума в {currency}, наприклад 1200.50 (пробіли між тисячами допустимі)",
		"currency.wrong":        "сума в {currency}, а інструмент приймає суми в {accepted}",
		"currency.two":          "дві різні валюти в одній сумі",
		"currency.conflict":     "сума в {currency}, а вказана валюта {given}",
		"currency.unsupported":  "сума в {currency} — цю валюту інструмент не приймає",
		"currency.not_currency": "не схоже на валюту",
		"fmt.amount":            "сума, наприклад 1200.50 (знак валюти та пробіли між тисячами допустимі)",
		"fmt.currency":          "код валюти ISO 4217, наприклад RUB, USD або EUR",

		// Counts (normalizer integer).
		"count.not_count": "не схоже на кількість",
		"count.not_whole": "не ціле число",
		"count.ambiguous": "більше одного числа; потрібна одна кількість",
		"fmt.integer":     "ціле число, наприклад 2 (зрозумілі й слова: два, двоє)",

		// The last digits of a card (normalizer last4).
		"digits.not_digits": "очікувалися цифри",
		"digits.found":      "знайдено цифр: {found}, потрібно {need}",
		"fmt.digits":        "останні {count} картки або рахунку, наприклад {example}",

		// Airport codes (normalizer iata).
		"iata.not_text": "очікувався код аеропорту рядком",
		"iata.city":     "не код аеропорту IATA; назва міста тут на код не перетворюється",
		"fmt.iata":      "трилітерний код IATA, наприклад MAD",

		// Accepted forms of enums and standard formats.
		"fmt.enum":             "одне з: {values}",
		"fmt.format":           "коректне значення формату {format}",
		"fmt.format.date-time": "дата й час за RFC 3339, наприклад 2026-08-22T18:30:00+03:00",
		"fmt.format.email":     "адреса пошти, наприклад name@example.com",
		"fmt.format.uuid":      "UUID, наприклад 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"fmt.format.uri":       "абсолютний URI, наприклад https://example.com/a",
		"fmt.format.time":      "час у вигляді ГГ:ХХ:СС зі зміщенням, наприклад 18:30:00+03:00",

		// A failed keyword of a property's schema.
		"schema.type":       "потрібно: {want}, отримано: {got}",
		"schema.enum":       "має бути одним із: {values}",
		"schema.const":      "має бути {value}",
		"schema.minimum":    "має бути не менше {limit}",
		"schema.maximum":    "має бути не більше {limit}",
		"schema.xminimum":   "має бути більше {limit}",
		"schema.xmaximum":   "має бути менше {limit}",
		"schema.multiple":   "має бути кратним {divisor}",
		"schema.minLength":  "закоротко: потрібно не менше {limit} символів, отримано {length}",
		"schema.maxLength":  "задовго: потрібно не більше {limit} символів, отримано {length}",
		"schema.pattern":    "не відповідає шаблону '{pattern}'",
		"schema.format":     "некоректне значення формату {format}",
		"schema.required":   "бракує полів: {names}",
		"schema.additional": "невідомі аргументи: {names}",
		"schema.minItems":   "потрібно не менше {limit} елементів",
		"schema.maxItems":   "потрібно не більше {limit} елементів",
		"schema.not":        "не допускається: {rule}",
		"schema.false":      "тут не допускається",
		"schema.anyOf":      "має виконуватися одне з: {alternatives}",
		"schema.oneOf":      "має виконуватися рівно одне з: {alternatives}",

		// Cross-field rules.
		"rule.when":       "якщо {condition}: {rule}",
		"rule.otherwise":  "якщо не {condition}: {rule}",
		"rule.must":       "{name} має бути: {requirement}",
		"rule.is":         "{name} = {value}",
		"rule.one_of":     "{name} — одне з: {values}",
		"rule.given":      "вказано {name}",
		"rule.required":   "потрібно вказати {name}",
		"rule.not":        "не ({rule})",
		"rule.and":        " і ",
		"rule.or":         " або ",
		"rule.alt":        "({n}) {rule}",
		"rule.cond_bound": "{name} {bounds}",

		// Bounds, lengths and patterns in words.
		"words.more_than": "більше {limit}",
		"words.at_least":  "не менше {limit}",
		"words.at_most":   "не більше {limit}",
		"words.less_than": "менше {limit}",
		"words.multiple":  "кратне {limit}",
		"words.len_range": "від {min} до {max} символів",
		"words.len_min":   "не менше {min} символів",
		"words.len_max":   "не більше {max} символів",
		"words.len_exact": "рівно {n} символів",
		"words.pattern":   "за шаблоном {pattern}",
		"words.then":      ", потім ",
		"words.exactly":   "{n} {noun}",
		"words.range":     "від {min} до {max} {noun}",
		"words.or_more":   "{nouns} (не менше {min})",
		"words.any":       "{nouns} у будь-якій кількості",
		"words.optional":  "необов'язково {noun}",

		// The number of digits a card slot keeps: "the last four digits".
		"digits.number.1":  "одна",
		"digits.number.2":  "дві",
		"digits.number.3":  "три",
		"digits.number.4":  "чотири",
		"digits.number.5":  "п'ять",
		"digits.number.6":  "шість",
		"digits.number.7":  "сім",
		"digits.number.8":  "вісім",
		"digits.number.9":  "дев'ять",
		"digits.number.10": "десять",
		"digits.count":     "{number} {noun}",

		// JSON Schema types.
		"type.string":  "рядок",
		"type.number":  "число",
		"type.integer": "ціле число",
		"type.boolean": "так/ні (boolean)",
		"type.object":  "об'єкт",
		"type.array":   "список",
		"type.null":    "null",

		// The next step of a turn: questions, summaries and notices.
		"step.ask":                "Уточніть, будь ласка: {label}.",
		"step.reconfirm":          "{label}: було {old}, тепер {new}. Замінити?",
		"step.overwritten":        "Зрозумів, змінюю: {label} — {new}.",
		"step.confirm":            "Перевірте, чи все правильно: {summary}.",
		"step.resume":             "Ми зупинилися на цьому: {summary}. Продовжуємо з того ж місця?",
		"step.resume_empty":       "Ми перервалися. Продовжуємо?",
		"step.handoff":            "Передаю розмову співробітнику. Уже відомо: {summary}. Не вдалося уточнити: {label}.",
		"notice.cancelled":        "Добре, нічого не роблю.",
		"notice.expired":          "Попередню розмову закрито за давністю, починаємо знову.",
		"notice.restarted":        "Добре, починаємо знову.",
		"notice.closed":           "Попередню розмову було закрито, починаємо знову.",
		"notice.resumed":          "Повертаємося: {tool}. Уже відомо: {summary}; залишилося уточнити: {missing}.",
		"notice.resumed_complete": "Повертаємося: {tool}. Уже відомо: {summary}.",
		"notice.closed_others":    "Закриваю незавершене: {tools}.",
		"failure.retry":           "Запит не виконано; повторити безпечно через {seconds} с.",
		"failure.handoff":         "Запит не виконано; передаю розмову співробітнику.",

		// Values as a user reads them in a sentence: a calendar day in the
		// long form (the month in the genitive), a yes or a no.
		"value.date":  "{day} {month} {year}",
		"value.true":  "так",
		"value.false": "ні",
		"month.1":     "січня",
		"month.2":     "лютого",
		"month.3":     "березня",
		"month.4":     "квітня",
		"month.5":     "травня",
		"month.6":     "червня",
		"month.7":     "липня",
		"month.8":     "серпня",
		"month.9":     "вересня",
		"month.10":    "жовтня",
		"month.11":    "листопада",
		"month.12":    "грудня",
	},
	nouns: map[string]noun{
		"digit":       {One: "цифра", Few: "цифри", Many: "цифр", Plural: "цифри"},
		"upper":       {One: "велика латинська літера", Few: "великі латинські літери", Many: "великих латинських літер", Plural: "великі латинські літери"},
		"lower":       {One: "мала латинська літера", Few: "малі латинські літери", Many: "малих латинських літер", Plural: "малі латинські літери"},
		"latin":       {One: "латинська літера", Few: "латинські літери", Many: "латинських літер", Plural: "латинські літери"},
		"alnum":       {One: "латинська літера або цифра", Few: "латинські літери або цифри", Many: "латинських літер або цифр", Plural: "латинські літери або цифри"},
		"upper_digit": {One: "велика латинська літера або цифра", Few: "великі латинські літери або цифри", Many: "великих латинських літер або цифр", Plural: "великі латинські літери або цифри"},
		"cyrillic":    {One: "кирилична літера", Few: "кириличні літери", Many: "кириличних літер", Plural: "кириличні літери"},
		"any":         {One: "символ", Few: "символи", Many: "символів", Plural: "символи"},
		"space":       {One: "пробіл", Few: "пробіли", Many: "пробілів", Plural: "пробіли"},
	},
	afterRange: plural.Many,
}
