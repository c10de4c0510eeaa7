package session

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracePlan marks on the turn's span, when the turn is traced, what its
// plan came to: an event between the store's two round trips, with the
// stages' outcomes as counts and names, never a slot value. Untraced, it
// costs a context lookup.
func tracePlan(ctx context.Context, commit *Commit, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if err != nil || commit == nil || commit.Result == nil {
		span.AddEvent("plan", trace.WithAttributes(attribute.Bool("slotd.failed", true)))
		return
	}
	res := commit.Result
	f := res.Facts
	span.AddEvent("plan", trace.WithAttributes(
		attribute.Int("slotd.lifetime.ended", len(res.Ended)),
		attribute.Bool("slotd.open.resumed", res.Resumed),
		attribute.Int("slotd.merge.changes", len(res.Changes)),
		attribute.Int("slotd.merge.rejected", len(f.Rejected)),
		attribute.String("slotd.decide.action", string(res.Action)),
		attribute.Int("slotd.decide.repaired", len(f.Repaired)),
		attribute.Bool("slotd.cap.handed_off", f.HandedOff != ""),
		attribute.Bool("slotd.record.first_ready", f.FirstReady)))
}
