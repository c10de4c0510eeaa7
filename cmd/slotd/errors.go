package main

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	slotdv1 "github.com/slotd/slotd/api/proto/slotd/v1"
)

// describe is an error as one human sentence: a call's problem detail
// rather than gRPC's "rpc error: code = … desc = …".
func describe(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	if p := problemOf(st); p != nil {
		if p.Detail != "" {
			return p.Detail
		}
		return p.Title
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		if strings.Contains(msg, "connection refused") {
			return "slotd is not listening there (connection refused): is slotd serve running?"
		}
		return "slotd is unavailable: " + msg
	case codes.DeadlineExceeded:
		return "slotd did not answer in time"
	}
	return strings.ToLower(strings.ReplaceAll(st.Code().String(), "_", " ")) + ": " + msg
}

// problemOf is the slotd.v1.Problem a status carries, or nil.
func problemOf(st *status.Status) *slotdv1.Problem {
	for _, d := range st.Details() {
		if p, ok := d.(*slotdv1.Problem); ok {
			return p
		}
	}
	return nil
}

// pointsAt reports whether err is a call's problem about one request field.
func pointsAt(err error, field string) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	if p := problemOf(st); p != nil {
		for _, e := range p.Errors {
			if e.Pointer == "/"+field {
				return true
			}
		}
	}
	return false
}

// codeOf is the gRPC code of a call's error.
func codeOf(err error) codes.Code { return status.Code(err) }
