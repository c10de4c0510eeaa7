package tracing_test

import (
	"testing"

	"github.com/slotd/slotd/internal/tracing"
)

// Tracing is on only when the environment names an exporter or an OTLP
// endpoint; the SDK's own default (OTLP to localhost) is not asked for.
func TestEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "slotd-eu", "OTEL_TRACES_SAMPLER": "always_on"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": " "}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4317"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "false"}, true},
	} {
		if got := tracing.Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("Enabled with %v = %v, want %v", tc.env, got, tc.want)
		}
	}
}
