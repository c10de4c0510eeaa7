package sessiontest

import (
	"slices"
	"testing"

	"github.com/slotd/slotd/internal/session"
)

// A conversation id prefix is matched byte for byte: %, _ and \ in it are
// no wildcards or escapes, as an operator typing "50%" or "a_b" means them.
func testListByPrefix(t *testing.T, h *harness) {
	convs := []string{"50%-off", "500-off", "a_b/1", "axb/1", `c:\tmp`, `c:tmp`, `c:\\tmp`, "Chat-1", "chat-1", "chat-10", "chät-1"}
	for _, conv := range convs {
		r := h.req(Flights, map[string]any{"from": "mad"})
		r.ConversationID = conv
		if _, err := h.engine.Turn(h.ctx, r); err != nil {
			t.Fatalf("%s: %v", conv, err)
		}
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"50%", []string{"50%-off"}},
		{"5", []string{"50%-off", "500-off"}},
		{"a_b", []string{"a_b/1"}},
		{"_", nil},
		{"%", nil},
		{`c:\`, []string{`c:\tmp`, `c:\\tmp`}},
		{`c:\\`, []string{`c:\\tmp`}},
		{`\`, nil},
		{"chat-1", []string{"chat-1", "chat-10"}},
		{"Chat", []string{"Chat-1"}},
		{"chä", []string{"chät-1"}},
		{"", convs},
	} {
		var got []string
		f := session.Filter{Tenant: h.tenant, ConversationPrefix: c.prefix, Limit: 2}
		for {
			page, next, err := h.engine.ListSessions(h.ctx, f)
			if err != nil {
				t.Fatalf("prefix %q: %v", c.prefix, err)
			}
			for _, s := range page {
				got = append(got, s.Key.ConversationID)
			}
			if next == "" {
				break
			}
			f.After = next
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("prefix %q lists %q, want %q", c.prefix, got, want)
		}
	}
	if other, _, err := h.engine.ListSessions(h.ctx, session.Filter{Tenant: "someone-else", ConversationPrefix: "chat"}); err != nil || len(other) != 0 {
		t.Errorf("another tenant lists %d sessions of the prefix (%v)", len(other), err)
	}
	for _, bad := range []string{"chat\x00", "chat\n", "4111 1111 1111 1111"} {
		if _, _, err := h.engine.ListSessions(h.ctx, session.Filter{Tenant: h.tenant, ConversationPrefix: bad}); err == nil {
			t.Errorf("prefix %q listed, want it refused", bad)
		}
	}
}
