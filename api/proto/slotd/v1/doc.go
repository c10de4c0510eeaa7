// Package slotdv1 is slotd's wire API: the protobuf messages and the gRPC
// services SlotService and AdminService, generated from slotd.proto by
// `make proto` and committed. It is public: clients in Go import it (package
// client wraps it), and every other language generates its own from the
// same .proto. slotd's public Go packages are client, contract (with
// contract/normalizer and contract/provider), problem and this one;
// everything else is internal to the slotd binary.
package slotdv1
