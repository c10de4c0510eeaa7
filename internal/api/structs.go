package api

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// newStruct is structpb.NewStruct, the same Struct or the same refusal of
// invalid UTF-8, with the Values of the map's strings, numbers and
// booleans allocated in a few slices rather than two objects each: every
// answer carries the session's slots as a Struct, and READY the arguments
// too. Other values (nested objects, lists, null) are made by NewValue.
func newStruct(m map[string]any) (*structpb.Struct, error) {
	var strs, nums, bools int
	for _, v := range m {
		switch v.(type) {
		case string:
			strs++
		case float64:
			nums++
		case bool:
			bools++
		}
	}
	vals := make([]structpb.Value, strs+nums+bools)
	strKinds := make([]structpb.Value_StringValue, strs)
	numKinds := make([]structpb.Value_NumberValue, nums)
	boolKinds := make([]structpb.Value_BoolValue, bools)
	fields := make(map[string]*structpb.Value, len(m))
	for k, v := range m {
		if !utf8.ValidString(k) {
			return nil, fmt.Errorf("invalid UTF-8 in string: %q", k)
		}
		var x *structpb.Value
		switch v := v.(type) {
		case string:
			if !utf8.ValidString(v) {
				return nil, fmt.Errorf("invalid UTF-8 in string: %q", v)
			}
			kind := next(&strKinds)
			kind.StringValue, x = v, next(&vals)
			x.Kind = kind
		case float64:
			kind := next(&numKinds)
			kind.NumberValue, x = v, next(&vals)
			x.Kind = kind
		case bool:
			kind := next(&boolKinds)
			kind.BoolValue, x = v, next(&vals)
			x.Kind = kind
		default:
			var err error
			if x, err = structpb.NewValue(v); err != nil {
				return nil, err
			}
		}
		fields[k] = x
	}
	return &structpb.Struct{Fields: fields}, nil
}

// next takes the first element off *s.
func next[T any](s *[]T) *T {
	x := &(*s)[0]
	*s = (*s)[1:]
	return x
}
