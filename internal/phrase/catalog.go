// Package phrase holds the sentences slotd says in a refusal, a rule or an
// accepted form, in English, Russian and Ukrainian, and chooses the language
// of a locale.
package phrase

import (
	"fmt"
	"strings"
)

// slotd words its refusals in English, Russian and Ukrainian: the
// languages of the seeds. A turn's locale picks one; a locale slotd has no
// words for falls back to the contract's default locale, then English; no
// locale at all means English.

// languages are the message languages, in catalog order.
var languages = [...]string{"en", "ru", "uk"}

// Lang reduces a locale to one of languages: the locale's base, else the
// fallback's base, else English. An empty locale is English.
func Lang(locale, fallback string) string {
	if locale == "" {
		return "en"
	}
	for _, l := range []string{Base(locale), Base(fallback)} {
		for _, have := range languages {
			if l == have {
				return have
			}
		}
	}
	return "en"
}

// catalog holds every sentence slotd says in a refusal, as fmt formats in
// en, ru and uk.
var catalog = map[string][3]string{
	"card.full": {"a full card number: never send one; only the last four digits of a card are ever needed",
		"полный номер карты: его нельзя передавать; нужны только последние четыре цифры карты",
		"повний номер картки: його не можна передавати; потрібні лише останні чотири цифри картки"},
	"unknown_argument": {"unknown argument", "неизвестный аргумент", "невідомий аргумент"},
	"fmt.arguments":    {"one of the tool's arguments", "один из аргументов инструмента", "один з аргументів інструмента"},

	"date.not_text": {"expected a date as text", "ожидалась дата строкой", "очікувалася дата рядком"},
	"date.not_date": {"not a date slotd can read", "не удалось прочитать дату", "не вдалося прочитати дату"},
	"date.no_such":  {"no such date", "такой даты нет", "такої дати немає"},
	"date.future":   {"the date is in the future; a date on or before %s is expected", "дата в будущем; нужна дата не позже %s", "дата в майбутньому; потрібна дата не пізніше %s"},
	"date.too_far":  {"more than %d days from today; write the date itself", "больше %d дней от сегодня; напишите саму дату", "більше %d днів від сьогодні; напишіть саму дату"},
	"date.past":     {"the date is in the past; a date on or after %s is expected", "дата в прошлом; нужна дата не раньше %s", "дата в минулому; потрібна дата не раніше %s"},
	"fmt.date": {"a date as YYYY-MM-DD, e.g. 2026-08-22; words such as yesterday, tonight, in 2 days, next Friday or 15 December are understood",
		"дата в виде YYYY-MM-DD, например 2026-08-22; понятны и слова: вчера, сегодня вечером, через 2 дня, в следующую пятницу, 15 декабря",
		"дата у вигляді YYYY-MM-DD, наприклад 2026-08-22; зрозумілі й слова: вчора, сьогодні ввечері, через 2 дні, наступної п'ятниці, 15 грудня"},

	"time.not_text": {"expected a time of day as text", "ожидалось время строкой", "очікувався час рядком"},
	"time.not_time": {"not a time of day slotd can read", "не удалось прочитать время", "не вдалося прочитати час"},
	"time.no_such":  {"no such time of day", "такого времени нет", "такого часу немає"},
	"fmt.time": {"a time of day as HH:MM on a 24-hour clock, e.g. 18:30",
		"время в виде ЧЧ:ММ (24 часа), например 18:30", "час у вигляді ГГ:ХХ (24 години), наприклад 18:30"},

	"amount.not_number": {"expected an amount", "ожидалась сумма", "очікувалася сума"},
	"amount.not_amount": {"not an amount", "не похоже на сумму", "не схоже на суму"},
	"amount.decimals":   {"more than %d decimal places", "больше %d знаков после запятой", "більше %d знаків після коми"},
	"amount.whole":      {"a whole amount without decimals is expected", "нужна целая сумма без дробной части", "потрібна ціла сума без дробової частини"},
	"fmt.amount_in": {"an amount in %s such as 1200.50 (spaces between thousands are fine)",
		"сумма в %s, например 1200.50 (пробелы между тысячами допустимы)", "сума в %s, наприклад 1200.50 (пробіли між тисячами допустимі)"},
	"currency.wrong":    {"the amount is in %s, but this tool takes amounts in %s", "сумма в %s, а инструмент принимает суммы в %s", "сума в %s, а інструмент приймає суми в %s"},
	"currency.two":      {"two different currencies in one amount", "две разные валюты в одной сумме", "дві різні валюти в одній сумі"},
	"currency.conflict": {"the amount is in %s, but the currency given is %s", "сумма в %s, а указана валюта %s", "сума в %s, а вказана валюта %s"},
	"currency.unsupported": {"the amount is in %s, a currency this tool does not take", "сумма в %s — эту валюту инструмент не принимает",
		"сума в %s — цю валюту інструмент не приймає"},
	"currency.not_currency": {"not a currency", "не похоже на валюту", "не схоже на валюту"},
	"fmt.amount": {"an amount such as 1200.50 (a currency sign or spaces between thousands are fine)",
		"сумма, например 1200.50 (знак валюты и пробелы между тысячами допустимы)",
		"сума, наприклад 1200.50 (знак валюти та пробіли між тисячами допустимі)"},
	"fmt.currency": {"an ISO 4217 currency code such as RUB, USD or EUR", "код валюты ISO 4217, например RUB, USD или EUR", "код валюти ISO 4217, наприклад RUB, USD або EUR"},

	"count.not_count": {"not a count", "не похоже на количество", "не схоже на кількість"},
	"count.not_whole": {"not a whole number", "не целое число", "не ціле число"},
	"count.ambiguous": {"more than one number; say one count", "больше одного числа; нужно одно количество", "більше одного числа; потрібна одна кількість"},
	"fmt.integer":     {"a whole number such as 2 (words such as two or двое are understood)", "целое число, например 2 (понятны и слова: два, двое)", "ціле число, наприклад 2 (зрозумілі й слова: два, двоє)"},

	"digits.not_digits": {"expected digits", "ожидались цифры", "очікувалися цифри"},
	"digits.found":      {"found %d digits, need %d", "найдено цифр: %d, нужно %d", "знайдено цифр: %d, потрібно %d"},
	"fmt.digits":        {"the last %s digits of the card or account, e.g. %s", "последние %s карты или счёта, например %s", "останні %s картки або рахунку, наприклад %s"},

	"iata.not_text": {"expected an airport code as text", "ожидался код аэропорта строкой", "очікувався код аеропорту рядком"},
	"iata.city": {"not an IATA airport code; a city name cannot be turned into one here",
		"не код аэропорта IATA; название города здесь в код не превращается",
		"не код аеропорту IATA; назва міста тут на код не перетворюється"},
	"fmt.iata": {"a three-letter IATA code such as MAD", "трёхбуквенный код IATA, например MAD", "трилітерний код IATA, наприклад MAD"},

	"fmt.enum":             {"one of: %s", "одно из: %s", "одне з: %s"},
	"fmt.format":           {"a valid %s", "корректное значение формата %s", "коректне значення формату %s"},
	"fmt.format.date-time": {"a date and time as RFC 3339, e.g. 2026-08-22T18:30:00+03:00", "дата и время по RFC 3339, например 2026-08-22T18:30:00+03:00", "дата й час за RFC 3339, наприклад 2026-08-22T18:30:00+03:00"},
	"fmt.format.email":     {"an e-mail address such as name@example.com", "адрес почты, например name@example.com", "адреса пошти, наприклад name@example.com"},
	"fmt.format.uuid":      {"a UUID such as 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "UUID, например 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "UUID, наприклад 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"},
	"fmt.format.uri":       {"an absolute URI such as https://example.com/a", "абсолютный URI, например https://example.com/a", "абсолютний URI, наприклад https://example.com/a"},
	"fmt.format.time":      {"a time as HH:MM:SS with an offset, e.g. 18:30:00+03:00", "время в виде ЧЧ:ММ:СС со смещением, например 18:30:00+03:00", "час у вигляді ГГ:ХХ:СС зі зміщенням, наприклад 18:30:00+03:00"},

	"schema.type":       {"want %s, got %s", "нужно: %s, получено: %s", "потрібно: %s, отримано: %s"},
	"schema.enum":       {"must be one of: %s", "должно быть одним из: %s", "має бути одним із: %s"},
	"schema.const":      {"must be %s", "должно быть %s", "має бути %s"},
	"schema.minimum":    {"minimum: want at least %s", "должно быть не меньше %s", "має бути не менше %s"},
	"schema.maximum":    {"maximum: want at most %s", "должно быть не больше %s", "має бути не більше %s"},
	"schema.xminimum":   {"exclusiveMinimum: want more than %s", "должно быть больше %s", "має бути більше %s"},
	"schema.xmaximum":   {"exclusiveMaximum: want less than %s", "должно быть меньше %s", "має бути менше %s"},
	"schema.multiple":   {"multipleOf: want a multiple of %s", "должно быть кратно %s", "має бути кратним %s"},
	"schema.minLength":  {"minLength: want at least %d characters, got %d", "слишком коротко: нужно не меньше %d символов, получено %d", "закоротко: потрібно не менше %d символів, отримано %d"},
	"schema.maxLength":  {"maxLength: want at most %d characters, got %d", "слишком длинно: нужно не больше %d символов, получено %d", "задовго: потрібно не більше %d символів, отримано %d"},
	"schema.pattern":    {"does not match pattern '%s'", "не соответствует шаблону '%s'", "не відповідає шаблону '%s'"},
	"schema.format":     {"is not a valid %s", "некорректное значение формата %s", "некоректне значення формату %s"},
	"schema.required":   {"missing properties: %s", "не хватает полей: %s", "бракує полів: %s"},
	"schema.additional": {"unknown arguments: %s", "неизвестные аргументы: %s", "невідомі аргументи: %s"},
	"schema.minItems":   {"minItems: want at least %d items", "нужно не меньше %d элементов", "потрібно не менше %d елементів"},
	"schema.maxItems":   {"maxItems: want at most %d items", "нужно не больше %d элементов", "потрібно не більше %d елементів"},
	"schema.not":        {"must not be: %s", "не допускается: %s", "не допускається: %s"},
	"schema.false":      {"is not allowed here", "здесь не допускается", "тут не допускається"},
	"schema.anyOf":      {"must satisfy one of: %s", "должно выполняться одно из: %s", "має виконуватися одне з: %s"},
	"schema.oneOf":      {"must satisfy exactly one of: %s", "должно выполняться ровно одно из: %s", "має виконуватися рівно одне з: %s"},

	"rule.when":       {"when %s: %s", "если %s: %s", "якщо %s: %s"},
	"rule.otherwise":  {"unless %s: %s", "если не %s: %s", "якщо не %s: %s"},
	"rule.must":       {"%s must be: %s", "%s должно быть: %s", "%s має бути: %s"},
	"rule.is":         {"%s is %s", "%s = %s", "%s = %s"},
	"rule.one_of":     {"%s is one of %s", "%s — одно из: %s", "%s — одне з: %s"},
	"rule.given":      {"%s is given", "указано %s", "вказано %s"},
	"rule.required":   {"%s is required", "нужно указать %s", "потрібно вказати %s"},
	"rule.not":        {"not (%s)", "не (%s)", "не (%s)"},
	"rule.and":        {" and ", " и ", " і "},
	"rule.or":         {" or ", " или ", " або "},
	"rule.alt":        {"(%d) %s", "(%d) %s", "(%d) %s"},
	"rule.cond_bound": {"%s is %s", "%s %s", "%s %s"},

	"words.more_than": {"more than %s", "больше %s", "більше %s"},
	"words.at_least":  {"at least %s", "не меньше %s", "не менше %s"},
	"words.at_most":   {"at most %s", "не больше %s", "не більше %s"},
	"words.less_than": {"less than %s", "меньше %s", "менше %s"},
	"words.multiple":  {"a multiple of %s", "кратно %s", "кратне %s"},
	"words.len_range": {"%d to %d characters", "от %d до %d символов", "від %d до %d символів"},
	"words.len_min":   {"at least %d characters", "не меньше %d символов", "не менше %d символів"},
	"words.len_max":   {"at most %d characters", "не больше %d символов", "не більше %d символів"},
	"words.len_exact": {"exactly %d characters", "ровно %d символов", "рівно %d символів"},
	"words.pattern":   {"matching the pattern %s", "по шаблону %s", "за шаблоном %s"},
	"words.then":      {", then ", ", затем ", ", потім "},
	"words.exactly":   {"%d %s", "%d %s", "%d %s"},
	"words.range":     {"%d to %d %s", "от %d до %d %s", "від %d до %d %s"},
	"words.or_more":   {"%d or more %s", "%[2]s (не меньше %[1]d)", "%[2]s (не менше %[1]d)"},
	"words.any":       {"any number of %s", "%s в любом количестве", "%s у будь-якій кількості"},
	"words.optional":  {"optionally %s", "необязательно %s", "необов'язково %s"},
	"words.literal":   {"%q", "%q", "%q"},
}

// Text words a catalog entry in a language.
func Text(lang, key string, args ...any) string {
	forms, ok := catalog[key]
	if !ok {
		return key
	}
	i := 0
	for j, l := range languages {
		if l == lang {
			i = j
		}
	}
	f := forms[i]
	if f == "" {
		f = forms[0]
	}
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// typeNames are JSON Schema types in words.
var typeNames = map[string][3]string{
	"string":  {"string", "строка", "рядок"},
	"number":  {"number", "число", "число"},
	"integer": {"integer", "целое число", "ціле число"},
	"boolean": {"boolean", "да/нет (boolean)", "так/ні (boolean)"},
	"object":  {"object", "объект", "об'єкт"},
	"array":   {"array", "список", "список"},
	"null":    {"null", "null", "null"},
}

// TypeName is a JSON Schema type in words.
func TypeName(lang, t string) string {
	forms, ok := typeNames[t]
	if !ok {
		return t
	}
	return forms[Index(lang)]
}

// Index is a language's place in the catalog's forms.
func Index(lang string) int {
	for i, l := range languages {
		if l == lang {
			return i
		}
	}
	return 0
}

// Plural picks the form of a noun after n: one, few, many (ru, uk rules;
// English uses one and many).
func Plural(lang string, n int, one, few, many string) string {
	if lang == "en" {
		if n == 1 {
			return one
		}
		return many
	}
	switch {
	case n%10 == 1 && n%100 != 11:
		return one
	case n%10 >= 2 && n%10 <= 4 && (n%100 < 10 || n%100 >= 20):
		return few
	}
	return many
}

// Base reduces "ru-RU" or "uk_UA" to "ru" or "uk".
func Base(locale string) string {
	locale = strings.ToLower(strings.TrimSpace(locale))
	if i := strings.IndexAny(locale, "-_"); i > 0 {
		locale = locale[:i]
	}
	return locale
}
