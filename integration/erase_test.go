package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
)

// An operator erases a conversation over HTTP with an admin key: the
// answer names the admin key by its name and the conversation by a hash;
// the tenant's conversation is gone, another stays; a tenant key may not
// erase, and a request without a conversation is a problem.
func TestGatewayEraseConversation(t *testing.T) {
	t.Parallel()
	inst := startServer(t, dbtestURL(t), contractsDir(t), withHTTP, withKeys)
	base := "http://" + inst.srv.HTTPAddr()
	for _, conv := range []string{"chat-42", "chat-43"} {
		body := `{"conversation_id": "` + conv + `", "tool": "travel.search_flights", "turn_id": "t1", "arguments": {"from": "mad"}}`
		if r := httpCall(t, http.MethodPost, base+"/v1/turn", bankKey, body); r.status != http.StatusOK {
			t.Fatalf("turn on %s = %d %s", conv, r.status, r.body)
		}
	}
	const erase = `{"tenant": "bank", "conversation_id": "chat-42"}`
	if r := httpCall(t, http.MethodPost, base+"/v1/admin/conversations/erase", bankKey, erase); r.status != http.StatusForbidden {
		t.Errorf("erasing with a tenant key = %d %s, want 403", r.status, r.body)
	}
	r := httpCall(t, http.MethodPost, base+"/v1/admin/conversations/erase", adminKey, erase)
	sum := sha256.Sum256([]byte("bank\x00chat-42"))
	got := r.json(t)
	if r.status != http.StatusOK || got["found"] != true || got["sessions_erased"] != float64(1) ||
		got["erased_by"] != "ops" || got["conversation_hash"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("POST /v1/admin/conversations/erase = %d %s; want found, 1 session, by ops, the hash", r.status, r.body)
	}
	if r := httpCall(t, http.MethodGet, base+"/v1/session?conversation_id=chat-42", bankKey, ""); r.status != http.StatusNotFound {
		t.Errorf("the erased conversation's session = %d %s, want 404", r.status, r.body)
	}
	if r := httpCall(t, http.MethodGet, base+"/v1/session?conversation_id=chat-43", bankKey, ""); r.status != http.StatusOK {
		t.Errorf("another conversation's session after the erasure = %d %s, want 200", r.status, r.body)
	}
	again := httpCall(t, http.MethodPost, base+"/v1/admin/conversations/erase", adminKey, erase)
	if g := again.json(t); again.status != http.StatusOK || g["found"] == true {
		t.Errorf("erasing again = %d %s; want 200 with nothing found", again.status, again.body)
	}
	if r := httpCall(t, http.MethodPost, base+"/v1/admin/conversations/erase", adminKey, `{"tenant": "bank"}`); r.status != http.StatusBadRequest ||
		r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("erasing without a conversation = %d %s %s; want a 400 problem", r.status, r.header.Get("Content-Type"), r.body)
	}
}
