package postgres_test

import (
	"testing"

	"github.com/hangarhq/hangar/store/storetest"
)

// BenchmarkAppendEnd appends the events that end a match with its result,
// statistics and ratings, in one transaction.
func BenchmarkAppendEnd(b *testing.B) { storetest.BenchmarkAppendEnd(b, benchStore(b)) }
