// Command dbsweep drops the databases a test run made on the server of
// SLOTD_TEST_DATABASE_URL, named with SLOTD_TEST_DB_PREFIX (see
// dbtest.Sweep), and fails naming those that were not templates: a test
// that left its database behind. make test runs it when its tests end.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/slotd/slotd/internal/testkit/dbtest"
)

func main() {
	prefix, err := dbtest.Prefix()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbsweep:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	left, err := dbtest.Sweep(ctx, dbtest.AdminURL(), prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbsweep:", err)
		os.Exit(2)
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "dbsweep: the tests left %d databases named %s* behind (now dropped):\n", len(left), prefix)
		for _, n := range left {
			fmt.Fprintln(os.Stderr, "  "+n)
		}
		os.Exit(1)
	}
	fmt.Printf("dbsweep: no database named %s* is left\n", prefix)
}
