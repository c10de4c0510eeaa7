package phrase

import "golang.org/x/text/feature/plural"

// russian is every sentence and counted noun slotd says in Russian.
var russian = words{
	texts: map[string]string{
		// A refused value: what the call named or held.
		"card.full":        "полный номер карты: его нельзя передавать; нужны только последние четыре цифры карты",
		"unknown_argument": "неизвестный аргумент",
		"fmt.arguments":    "один из аргументов инструмента",

		// Dates (normalizer date).
		"date.not_text": "ожидалась дата строкой",
		"date.not_date": "не удалось прочитать дату",
		"date.no_such":  "такой даты нет",
		"date.future":   "дата в будущем; нужна дата не позже {day}",
		"date.too_far":  "больше {days} дней от сегодня; напишите саму дату",
		"date.past":     "дата в прошлом; нужна дата не раньше {day}",
		"fmt.date":      "дата в виде YYYY-MM-DD, например 2026-08-22; понятны и слова: вчера, сегодня вечером, через 2 дня, в следующую пятницу, 15 декабря",

		// Times of day (normalizer time).
		"time.not_text": "ожидалось время строкой",
		"time.not_time": "не удалось прочитать время",
		"time.no_such":  "такого времени нет",
		"fmt.time":      "время в виде ЧЧ:ММ (24 часа), например 18:30",

		// Amounts and currencies (normalizers amount and currency).
		"amount.not_number":     "ожидалась сумма",
		"amount.not_amount":     "не похоже на сумму",
		"amount.decimals":       "больше {decimals} знаков после запятой",
		"amount.whole":          "нужна целая сумма без дробной части",
		"fmt.amount_in":         "сумма в {currency}, например 1200.50 (пробелы между тысячами допустимы)",
		"currency.wrong":        "сумма в {currency}, а инструмент принимает суммы в {accepted}",
		"currency.two":          "две разные валюты в одной сумме",
		"currency.conflict":     "сумма в {currency}, а указана валюта {given}",
		"currency.unsupported":  "сумма в {currency} — эту валюту инструмент не принимает",
		"currency.not_currency": "не похоже на валюту",
		"fmt.amount":            "сумма, например 1200.50 (знак валюты и пробелы между тысячами допустимы)",
		"fmt.currency":          "код валюты ISO 4217, например RUB, USD или EUR",

		// Counts (normalizer integer).
		"count.not_count": "не похоже на количество",
		"count.not_whole": "не целое число",
		"count.ambiguous": "больше одного числа; нужно одно количество",
		"fmt.integer":     "целое число, например 2 (понятны и слова: два, двое)",

		// The last digits of a card (normalizer last4).
		"digits.not_digits": "ожидались цифры",
		"digits.found":      "найдено цифр: {found}, нужно {need}",
		"fmt.digits":        "последние {count} карты или счёта, например {example}",

		// Airport codes (normalizer iata).
		"iata.not_text": "ожидался код аэропорта строкой",
		"iata.city":     "не код аэропорта IATA; название города здесь в код не превращается",
		"fmt.iata":      "трёхбуквенный код IATA, например MAD",

		// Accepted forms of enums and standard formats.
		"fmt.enum":             "одно из: {values}",
		"fmt.format":           "корректное значение формата {format}",
		"fmt.format.date-time": "дата и время по RFC 3339, например 2026-08-22T18:30:00+03:00",
		"fmt.format.email":     "адрес почты, например name@example.com",
		"fmt.format.uuid":      "UUID, например 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"fmt.format.uri":       "абсолютный URI, например https://example.com/a",
		"fmt.format.time":      "время в виде ЧЧ:ММ:СС со смещением, например 18:30:00+03:00",

		// A failed keyword of a property's schema.
		"schema.type":       "нужно: {want}, получено: {got}",
		"schema.enum":       "должно быть одним из: {values}",
		"schema.const":      "должно быть {value}",
		"schema.minimum":    "должно быть не меньше {limit}",
		"schema.maximum":    "должно быть не больше {limit}",
		"schema.xminimum":   "должно быть больше {limit}",
		"schema.xmaximum":   "должно быть меньше {limit}",
		"schema.multiple":   "должно быть кратно {divisor}",
		"schema.minLength":  "слишком коротко: нужно не меньше {limit} символов, получено {length}",
		"schema.maxLength":  "слишком длинно: нужно не больше {limit} символов, получено {length}",
		"schema.pattern":    "не соответствует шаблону '{pattern}'",
		"schema.format":     "некорректное значение формата {format}",
		"schema.required":   "не хватает полей: {names}",
		"schema.additional": "неизвестные аргументы: {names}",
		"schema.minItems":   "нужно не меньше {limit} элементов",
		"schema.maxItems":   "нужно не больше {limit} элементов",
		"schema.not":        "не допускается: {rule}",
		"schema.false":      "здесь не допускается",
		"schema.anyOf":      "должно выполняться одно из: {alternatives}",
		"schema.oneOf":      "должно выполняться ровно одно из: {alternatives}",

		// Cross-field rules.
		"rule.when":       "если {condition}: {rule}",
		"rule.otherwise":  "если не {condition}: {rule}",
		"rule.must":       "{name} должно быть: {requirement}",
		"rule.is":         "{name} = {value}",
		"rule.one_of":     "{name} — одно из: {values}",
		"rule.given":      "указано {name}",
		"rule.required":   "нужно указать {name}",
		"rule.not":        "не ({rule})",
		"rule.and":        " и ",
		"rule.or":         " или ",
		"rule.alt":        "({n}) {rule}",
		"rule.cond_bound": "{name} {bounds}",

		// Bounds, lengths and patterns in words.
		"words.more_than": "больше {limit}",
		"words.at_least":  "не меньше {limit}",
		"words.at_most":   "не больше {limit}",
		"words.less_than": "меньше {limit}",
		"words.multiple":  "кратно {limit}",
		"words.len_range": "от {min} до {max} символов",
		"words.len_min":   "не меньше {min} символов",
		"words.len_max":   "не больше {max} символов",
		"words.len_exact": "ровно {n} символов",
		"words.pattern":   "по шаблону {pattern}",
		"words.then":      ", затем ",
		"words.exactly":   "{n} {noun}",
		"words.range":     "от {min} до {max} {noun}",
		"words.or_more":   "{nouns} (не меньше {min})",
		"words.any":       "{nouns} в любом количестве",
		"words.optional":  "необязательно {noun}",

		// The number of digits a card slot keeps: "the last four digits".
		"digits.number.1":  "одна",
		"digits.number.2":  "две",
		"digits.number.3":  "три",
		"digits.number.4":  "четыре",
		"digits.number.5":  "пять",
		"digits.number.6":  "шесть",
		"digits.number.7":  "семь",
		"digits.number.8":  "восемь",
		"digits.number.9":  "девять",
		"digits.number.10": "десять",
		"digits.count":     "{number} {noun}",

		// JSON Schema types.
		"type.string":  "строка",
		"type.number":  "число",
		"type.integer": "целое число",
		"type.boolean": "да/нет (boolean)",
		"type.object":  "объект",
		"type.array":   "список",
		"type.null":    "null",

		// The next step of a turn: questions, summaries and notices.
		"step.ask":                "Уточните, пожалуйста: {label}.",
		"step.reconfirm":          "{label}: было {old}, теперь {new}. Заменить?",
		"step.overwritten":        "Понял, меняю: {label} — {new}.",
		"step.confirm":            "Проверьте, всё ли верно: {summary}.",
		"step.resume":             "Мы остановились на этом: {summary}. Продолжаем с того же места?",
		"step.resume_empty":       "Мы прервались. Продолжаем?",
		"step.handoff":            "Передаю разговор сотруднику. Уже известно: {summary}. Не удалось уточнить: {label}.",
		"notice.cancelled":        "Хорошо, ничего не делаю.",
		"notice.expired":          "Прошлый разговор закрыт за давностью, начинаем заново.",
		"notice.restarted":        "Хорошо, начинаем заново.",
		"notice.closed":           "Прошлый разговор был закрыт, начинаем заново.",
		"notice.resumed":          "Возвращаемся: {tool}. Уже известно: {summary}; осталось уточнить: {missing}.",
		"notice.resumed_complete": "Возвращаемся: {tool}. Уже известно: {summary}.",
		"notice.closed_others":    "Закрываю незавершённое: {tools}.",
		"failure.retry":           "Заявка не создана; повторить безопасно через {seconds} с.",
		"failure.handoff":         "Заявка не создана; передаю разговор сотруднику.",

		// Values as a user reads them in a sentence: a calendar day in the
		// long form (the month in the genitive), a yes or a no.
		"value.date":  "{day} {month} {year}",
		"value.true":  "да",
		"value.false": "нет",
		"month.1":     "января",
		"month.2":     "февраля",
		"month.3":     "марта",
		"month.4":     "апреля",
		"month.5":     "мая",
		"month.6":     "июня",
		"month.7":     "июля",
		"month.8":     "августа",
		"month.9":     "сентября",
		"month.10":    "октября",
		"month.11":    "ноября",
		"month.12":    "декабря",
	},
	nouns: map[string]noun{
		"digit":       {One: "цифра", Few: "цифры", Many: "цифр", Plural: "цифры"},
		"upper":       {One: "заглавная латинская буква", Few: "заглавные латинские буквы", Many: "заглавных латинских букв", Plural: "заглавные латинские буквы"},
		"lower":       {One: "строчная латинская буква", Few: "строчные латинские буквы", Many: "строчных латинских букв", Plural: "строчные латинские буквы"},
		"latin":       {One: "латинская буква", Few: "латинские буквы", Many: "латинских букв", Plural: "латинские буквы"},
		"alnum":       {One: "латинская буква или цифра", Few: "латинские буквы или цифры", Many: "латинских букв или цифр", Plural: "латинские буквы или цифры"},
		"upper_digit": {One: "заглавная латинская буква или цифра", Few: "заглавные латинские буквы или цифры", Many: "заглавных латинских букв или цифр", Plural: "заглавные латинские буквы или цифры"},
		"cyrillic":    {One: "русская буква", Few: "русские буквы", Many: "русских букв", Plural: "русские буквы"},
		"any":         {One: "символ", Few: "символа", Many: "символов", Plural: "символа"},
		"space":       {One: "пробел", Few: "пробела", Many: "пробелов", Plural: "пробела"},
	},
	afterRange: plural.Many,
}
