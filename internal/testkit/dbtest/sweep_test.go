package dbtest

import (
	"context"
	"slices"
	"testing"
)

// Sweep drops the databases and templates of its prefix, names the
// databases that were not templates, and leaves every other name alone,
// including one that only shares the start of the prefix without its end.
func TestSweepDropsWhatARunLeft(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	admin := connectAdmin(ctx, t)
	prefix := "slotd_sweep_" + randomHex() + "_"
	leaked, tmpl, half := prefix+"leaked", prefix+"template_abc", prefix+"template_half"
	other := prefix[:len(prefix)-1] + "x_other" // the prefix without its final _
	for _, n := range []string{leaked, tmpl, half, other} {
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident(n)); err != nil {
			t.Fatal(err)
		}
	}
	// The test's context has ended when cleanups run, and the connection
	// must outlive the test's body: both are the cleanup's own.
	t.Cleanup(func() {
		ctx := context.Background()
		defer admin.Close(ctx)
		for _, n := range []string{leaked, tmpl, half, other} {
			_, _ = admin.Exec(ctx, "ALTER DATABASE "+ident(n)+" WITH IS_TEMPLATE false")
			if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident(n)+" WITH (FORCE)"); err != nil {
				t.Errorf("drop %s: %v", n, err)
			}
		}
	})
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident(tmpl)+" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true"); err != nil {
		t.Fatal(err)
	}
	// An open connection does not keep a leaked database.
	conn := Connect(t, mustWithDatabase(t, leaked))
	if err := conn.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	left, err := Sweep(ctx, AdminURL(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{leaked}) {
		t.Errorf("Sweep named %q as left behind, want only %s", left, leaked)
	}
	var names []string
	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname", prefix[:len(prefix)-1])
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{other}) {
		t.Errorf("after Sweep the server has %q, want only %s", names, other)
	}

	if left, err := Sweep(ctx, AdminURL(), prefix); err != nil || len(left) != 0 {
		t.Errorf("a second Sweep = %q, %v; want nothing left", left, err)
	}
}

func TestSweepRefusesABadPrefix(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "Slotd_", "slotd-test_", "1slotd_", "slotd_test_é_", "slotd_a_prefix_far_longer_than_thirty_"} {
		if _, err := Sweep(t.Context(), AdminURL(), p); err == nil {
			t.Errorf("Sweep with prefix %q: no error, want it refused", p)
		}
	}
}

func TestPrefixFromTheEnvironment(t *testing.T) {
	t.Setenv("SLOTD_TEST_DB_PREFIX", "")
	if p, err := Prefix(); err != nil || p != DefaultPrefix {
		t.Errorf("Prefix without SLOTD_TEST_DB_PREFIX = %q, %v; want %q", p, err, DefaultPrefix)
	}
	t.Setenv("SLOTD_TEST_DB_PREFIX", "ci_run7_")
	if p, err := Prefix(); err != nil || p != "ci_run7_" {
		t.Errorf("Prefix = %q, %v; want ci_run7_", p, err)
	}
	if n := newName(); len(n) != len("ci_run7_")+12 || n[:8] != "ci_run7_" {
		t.Errorf("newName = %q, want ci_run7_ and 12 hex digits", n)
	}
	if got := templatePrefix(); got != "ci_run7_template_" {
		t.Errorf("templatePrefix = %q, want ci_run7_template_", got)
	}
	t.Setenv("SLOTD_TEST_DB_PREFIX", "Bad-Prefix")
	if _, err := Prefix(); err == nil {
		t.Error("Prefix with SLOTD_TEST_DB_PREFIX=Bad-Prefix: no error, want it refused")
	}
}

func mustWithDatabase(t *testing.T, name string) string {
	t.Helper()
	u, err := withDatabase(AdminURL(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
