// Package openapi holds the OpenAPI document of slotd's HTTP/JSON API, made
// from api/proto and api/gateway.yaml by `make proto` (protoc-gen-openapiv2)
// and committed; `make test` fails when it is stale.
package openapi

import _ "embed"

// Document is slotd.swagger.json (OpenAPI 2.0), served by the gateway at
// /v1/openapi.json.
//
//go:embed slotd.swagger.json
var Document []byte
