package pgstore

import "errors"

// NotReplicated reports whether err is a unit of work whose COMMIT Postgres
// answered with a warning, so that it is not known to be on the
// synchronous standby: the metrics count these apart from other
// unavailability, since they say replication, not the primary, is in
// trouble.
func NotReplicated(err error) bool { return errors.Is(err, errNotReplicated) }
