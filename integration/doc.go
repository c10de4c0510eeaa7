// Package integration holds slotd's end-to-end tests: slotd in process or
// as a child process on real Postgres, driven by real clients.
//
// The attack tests (preauth_test.go, share_test.go, mcp_attack_test.go)
// hold slotd to latency bounds while it is flooded on a 2-core machine: a
// turn of the other tenant under 1 s. They are not parallel, so that they
// run one at a time before the package's parallel tests start, and make
// test runs this package after the others, so that no other package's
// tests share the cores with them.
package integration
