// Package tracing is slotd's OpenTelemetry traces: a tracer provider
// configured by the standard OTEL_* environment variables, the W3C trace
// context slotd takes from its callers, and the spans of the Postgres
// round trips. Tracing is off unless the environment names an exporter;
// off, nothing here runs on a turn.
package tracing

import (
	"context"
	"os"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of slotd's own spans.
const Name = "github.com/slotd/slotd"

// Propagator reads the W3C trace context (traceparent, tracestate) of a
// call.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Enabled reports whether the environment asks for traces: an exporter
// named in OTEL_TRACES_EXPORTER (other than "none"), or an OTLP endpoint.
// The SDK itself would export to localhost:4318 with neither, which a
// server that was not asked to trace has no business doing.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); {
	case exp == "none":
		return false
	case exp != "":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// FromEnv is the tracer provider the environment configures (exporter,
// protocol, endpoint, headers, sampler, batching, resource), or nil when
// Enabled says tracing is off. Shut it down to send what it holds.
func FromEnv(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if !Enabled(os.Getenv) {
		return nil, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, err
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default
	// name.
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName("slotd")), resource.Environment())
	if err != nil {
		res = resource.Environment()
	}
	// The sampler (OTEL_TRACES_SAMPLER) and the batching (OTEL_BSP_*) are
	// read from the environment by the SDK.
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// PoolTracer traces a pgx pool's acquires, statements and batches as
// children of the turn's span. The spans carry the SQL (slotd's own constants), never its
// arguments, and no connection details: like the logs, they do not name
// the database's user, host or database.
func PoolTracer(tp trace.TracerProvider) pgx.QueryTracer {
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(tp), otelpgx.WithDisableConnectionDetailsInAttributes())
}
