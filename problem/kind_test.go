package problem

import (
	"strings"
	"testing"
)

func TestEveryKindHasItsOwnName(t *testing.T) {
	t.Parallel()
	seen := map[string]Kind{}
	for _, k := range Kinds() {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "Kind(") {
			t.Errorf("kind %d has no name", int(k))
		}
		if other, ok := seen[name]; ok {
			t.Errorf("kinds %d and %d are both named %q", int(other), int(k), name)
		}
		seen[name] = k
	}
	if len(seen) < int(KindInternal) || Kinds()[0] != KindInvalidRequest {
		t.Errorf("Kinds() = %v, want every kind from %v to %v", Kinds(), KindInvalidRequest, KindInternal)
	}
	if got := Kind(0).String(); got != "Kind(0)" {
		t.Errorf("the zero Kind is named %q, want Kind(0): it is no kind", got)
	}
}

func TestResponseKindReadsTheType(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]Kind{
		TypeInvalidValue:              KindInvalidValue,
		TypeRuleViolated:              KindRuleViolated,
		TypeHandoff:                   KindHandoff,
		TypeBackendTimeout:            KindBackendTimeout,
		Base + "backend-unavailable":  KindBackendFailure,
		Base + "backend-rate-limited": KindBackendFailure,
		Base + "backend-unauthorized": KindBackendFailure,
		Base + "backend-error":        KindBackendFailure,
		TypeBackendOutputInvalid:      KindBackendFailure,
		TypeConflict:                  KindInternal,
		"":                            KindInternal,
	} {
		if got := ResponseKind(typ); got != want {
			t.Errorf("ResponseKind(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestConstructorsLeaveTheStatusToTheAdapter(t *testing.T) {
	t.Parallel()
	for _, pe := range []*Error{
		InvalidRequest("f", "m"), TooLarge("d"), UnknownTool("x", nil), NotFound("session"), Ended(),
		Unavailable(1), Conflict(1), Overloaded(1), DeadlinePassed(), Cancelled(), Unauthenticated("d"),
		PermissionDenied("d"), Internal(),
	} {
		if pe.Kind == 0 || pe.Problem.Type == "" || pe.Problem.Title == "" {
			t.Errorf("%+v: want a kind, a type and a title", pe)
		}
		if pe.Problem.Status != 0 {
			t.Errorf("%s: status %d set below the adapter", pe.Kind, pe.Problem.Status)
		}
	}
}
