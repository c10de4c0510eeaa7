package contract

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slotd/slotd/contract/internal/jsontree"
	"github.com/slotd/slotd/internal/phrase"
	"github.com/slotd/slotd/problem"
)

// Output is a tool's output contract (x-slotd.output): the JSON Schema of
// what goes back into the model's context after the backend call.
type Output struct {
	schema *jsonschema.Schema
	fields map[string]*outputField
}

type outputField struct {
	sensitive bool
	// fields of a nested object; nil when the property declares none.
	fields map[string]*outputField
}

type outputDocument struct {
	Properties map[string]json.RawMessage `json:"properties"`
	X          *struct {
		Sensitive bool `json:"sensitive"`
	} `json:"x-slotd"`
}

func parseOutputFields(raw json.RawMessage) (map[string]*outputField, error) {
	var doc outputDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc.Properties == nil {
		return nil, nil
	}
	fields := make(map[string]*outputField, len(doc.Properties))
	for name, praw := range doc.Properties {
		var pd outputDocument
		if err := json.Unmarshal(praw, &pd); err != nil {
			return nil, err
		}
		f := &outputField{sensitive: pd.X != nil && pd.X.Sensitive}
		if pd.Properties != nil {
			var err error
			if f.fields, err = parseOutputFields(praw); err != nil {
				return nil, err
			}
		}
		fields[name] = f
	}
	return fields, nil
}

// Output is the contract's output contract, or nil when it declares none.
func (c *Contract) Output() *Output { return c.output }

// Shape turns the backend's raw result into the object the model may see:
// properties the contract does not name are dropped (a gateway's answer full
// of other people's data never reaches the model), sensitive ones masked,
// card-like numbers redacted everywhere. The errors say how the shaped object
// breaks the output contract, worded in the locale (the session's: the
// problem they go into speaks it); the object is not for the model then.
func (o *Output) Shape(result any, locale string) (map[string]any, []problem.FieldError) {
	lang := phrase.Lang(locale, "")
	obj, ok := result.(map[string]any)
	if !ok {
		return nil, []problem.FieldError{{Pointer: "", Message: phrase.Text(lang, "output.not_object", nil)}}
	}
	out := shapeObject(obj, o.fields)
	if err := o.schema.Validate(toValidation(out)); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return out, []problem.FieldError{{Message: phrase.Text(lang, "output.invalid", nil)}}
		}
		var errs []problem.FieldError
		walkLeaves(ve, func(e *jsonschema.ValidationError) {
			errs = append(errs, problem.FieldError{Pointer: jsontree.Pointer(e.InstanceLocation), Message: leafMessage(e, lang)})
		})
		return out, errs
	}
	return out, nil
}

// Validate checks an object slotd built itself (an error result) against the
// output contract.
func (o *Output) Validate(obj map[string]any) error {
	return o.schema.Validate(toValidation(obj))
}

func shapeObject(obj map[string]any, fields map[string]*outputField) map[string]any {
	out := make(map[string]any, len(fields))
	for name, f := range fields {
		v, ok := obj[name]
		if !ok {
			continue
		}
		switch {
		case f.sensitive:
			out[name] = "•••"
		case f.fields != nil:
			if nested, ok := v.(map[string]any); ok {
				out[name] = shapeObject(nested, f.fields)
			} else {
				out[name] = problem.RedactValue(v)
			}
		default:
			out[name] = problem.RedactValue(v)
		}
	}
	return out
}

// Redacted is a JSON value with card-like numbers masked everywhere.
func Redacted(v any) any { return problem.RedactValue(v) }

// toValidation converts float64 numbers to json.Number the way the schema
// library reads documents.
func toValidation(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = toValidation(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = toValidation(x)
		}
		return out
	case float64:
		return validationForm(nil, t)
	case int:
		return json.Number(strconv.Itoa(t))
	}
	return v
}
