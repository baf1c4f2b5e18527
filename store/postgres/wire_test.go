package postgres

import (
	"bytes"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestWireIsPgxsBinary checks that wire writes each argument of the batch
// statements byte for byte as pgx's binary encoding of it does: empty and
// nil slices, NULL elements, int and bigint parameters from either Go
// integer type, times before 2000 and with nanoseconds.
func TestWireIsPgxsBinary(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 6, 7, 8, 123456789, time.FixedZone("x", 3600))
	old := time.Date(1969, 7, 20, 20, 17, 40, 999, time.UTC)
	for _, tc := range []struct {
		name string
		oid  uint32
		arg  any
	}{
		{"text", oidTextArr, []string{"m_1", "", "數據"}},
		{"text empty", oidTextArr, []string{}},
		{"bigint", oidInt8Arr, []int64{0, 1, -1, 1 << 40}},
		{"bigint empty", oidInt8Arr, []int64{}},
		{"bigint from int", oidInt8Arr, []int{3, -4}},
		{"int", oidInt4Arr, []int{0, 7, -7, 1<<31 - 1}},
		{"int from int64", oidInt4Arr, []int64{5, -1 << 31}},
		{"bool", oidBoolArr, []bool{true, false, true}},
		{"bytea", oidByteaArr, [][]byte{{1, 2}, {}, {0xff}}},
		{"bytea with null", oidByteaArr, [][]byte{{1}, nil}},
		{"bytea empty", oidByteaArr, [][]byte{}},
		{"timestamptz", oidTstzArr, []time.Time{t0, old, {}}},
		{"timestamptz with null", oidTstzArr, []*time.Time{&t0, nil, &old}},
		{"timestamptz all null", oidTstzArr, []*time.Time{nil}},
		{"timestamptz empty", oidTstzArr, []*time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := pgtype.NewMap().Encode(tc.oid, pgtype.BinaryFormatCode, tc.arg, nil)
			if err != nil {
				t.Fatal(err)
			}
			var w wire
			got, err := w.encode([]uint32{oidTextArr, tc.oid}, []any{[]string{"ahead"}, tc.arg})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[1], want) {
				t.Errorf("wire wrote\n%x\npgx writes\n%x", got[1], want)
			}
		})
	}
}

// TestWireRefuses checks that an argument wire cannot write as its
// parameter's type is an error, not a value the server would misread.
func TestWireRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		oid  uint32
		arg  any
	}{
		{"strings as bigint[]", oidInt8Arr, []string{"1"}},
		{"a scalar", oidText, "m_1"},
		{"int out of range", oidInt4Arr, []int64{1 << 31}},
		{"bools as text[]", oidTextArr, []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w wire
			if _, err := w.encode([]uint32{tc.oid}, []any{tc.arg}); err == nil {
				t.Errorf("wire wrote a %T as type %d", tc.arg, tc.oid)
			}
		})
	}
	var w wire
	if _, err := w.encode([]uint32{oidTextArr}, nil); err == nil {
		t.Error("no error for too few arguments")
	}
}
