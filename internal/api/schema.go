package api

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
	"github.com/slotd/slotd/contract/provider"
	"github.com/slotd/slotd/problem"
)

// GetToolSchema implements slotd.v1.SlotService: the tool's input schema in
// the form the provider's strict mode accepts ("openai" and "openai-chat",
// whose schemas are the same, or "anthropic"), or as written without
// slotd's extension ("plain", also when no provider is named). The parameters are a google.protobuf.Struct, which keeps no
// member order; `slotd contract export` prints them in contract order.
func (s *SlotService) GetToolSchema(ctx context.Context, req *slotdv1.GetToolSchemaRequest) (*slotdv1.GetToolSchemaResponse, error) {
	cat := s.engine.Contracts()
	if req.GetTool() == "" {
		return nil, problem.InvalidRequest("tool", "required")
	}
	c := cat.Get(req.GetTool())
	if c == nil {
		return nil, problem.UnknownTool(req.GetTool(), cat.Names())
	}
	prov := strings.ToLower(strings.TrimSpace(req.GetProvider()))
	if prov == "" {
		prov = provider.Plain
	}
	e, err := provider.Export(c, prov)
	if errors.Is(err, provider.ErrUnknown) {
		return nil, problem.InvalidRequest("provider", "one of "+strings.Join(provider.Names(), ", "))
	}
	if err != nil {
		return nil, err
	}
	params, err := structpb.NewStruct(e.Parameters())
	if err != nil {
		return nil, err
	}
	return &slotdv1.GetToolSchemaResponse{
		Name: e.Name, Description: e.Description, Parameters: params, Provider: e.Provider, Version: e.Version,
	}, nil
}
