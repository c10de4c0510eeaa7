package dbtest

import (
	"context"
	"testing"

	"github.com/slotd/slotd/migrations"
)

// perIteration is a testing.TB whose cleanups run when the iteration ends,
// not when the benchmark does, so that b.N databases never exist at once.
type perIteration struct {
	testing.TB
	cleanups []func()
}

func (p *perIteration) Cleanup(f func()) { p.cleanups = append(p.cleanups, f) }

func (p *perIteration) end() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
}

// BenchmarkNewPool measures what a test waits for before it has a migrated
// database: run with -benchtime=20x, as each iteration creates and drops a
// database on the shared server.
func BenchmarkNewPool(b *testing.B) {
	p := &perIteration{TB: b}
	for range b.N {
		NewPool(p)
		b.StopTimer()
		p.end()
		b.StartTimer()
	}
}

// BenchmarkNewDatabase measures the creation of a test's database alone.
func BenchmarkNewDatabase(b *testing.B) {
	p := &perIteration{TB: b}
	for range b.N {
		NewDatabase(p)
		b.StopTimer()
		p.end()
		b.StartTimer()
	}
}

// BenchmarkNewEmptyDatabase is the creation of a database from template1.
func BenchmarkNewEmptyDatabase(b *testing.B) {
	p := &perIteration{TB: b}
	for range b.N {
		NewEmptyDatabase(p)
		b.StopTimer()
		p.end()
		b.StartTimer()
	}
}

// BenchmarkMigrateEmptyDatabase is what a migrated database cost without
// the template: an empty one, then the migrations.
func BenchmarkMigrateEmptyDatabase(b *testing.B) {
	p := &perIteration{TB: b}
	for range b.N {
		pool := Connect(p, NewEmptyDatabase(p))
		if _, err := migrations.Up(context.Background(), pool); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.end()
		b.StartTimer()
	}
}
