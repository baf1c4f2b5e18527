package postgres

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"
)

// wire is the arguments of a statement in Postgres's binary format, all
// written into one buffer that is used again for the next statement, for
// the batch path (batch.go), which sends them through pgconn. pgx encodes
// the same arguments through its type map, which allocates for every
// array and element and grows a fresh buffer for every statement: the
// largest share of the allocations of the write path, and so of its
// garbage collection.
//
// Only the array types of the batch statements are written: text[],
// bigint[], int[], boolean[], bytea[] and timestamptz[], each from the
// Go slice type the statements' arguments use. Which element type an
// argument becomes is the parameter's type as the server described it,
// so an argument and its parameter never disagree silently: a pair wire
// cannot write is an error.
type wire struct {
	buf    []byte
	ends   []int
	values [][]byte
}

// wires are wire buffers between statements.
var wires = sync.Pool{New: func() any { return new(wire) }}

// Element and array type OIDs (pg_type).
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt4        = 23
	oidText        = 25
	oidBoolArr     = 1000
	oidByteaArr    = 1001
	oidInt4Arr     = 1007
	oidTextArr     = 1009
	oidInt8Arr     = 1016
	oidTimestamptz = 1184
	oidTstzArr     = 1185
)

// y2k is the epoch of Postgres timestamps, in Unix microseconds.
const y2k = 946684800 * 1000000

// encode writes args, the arguments of a statement whose parameters are
// of the types oids, and returns them, each a slice of w's buffer, valid
// until w's next encode.
func (w *wire) encode(oids []uint32, args []any) ([][]byte, error) {
	if len(oids) != len(args) {
		return nil, fmt.Errorf("postgres: %d arguments for %d parameters", len(args), len(oids))
	}
	w.buf, w.ends, w.values = w.buf[:0], w.ends[:0], w.values[:0]
	for i, a := range args {
		if err := w.arg(oids[i], a); err != nil {
			return nil, fmt.Errorf("postgres: argument %d: %w", i+1, err)
		}
		w.ends = append(w.ends, len(w.buf))
	}
	start := 0
	for _, end := range w.ends {
		w.values = append(w.values, w.buf[start:end:end])
		start = end
	}
	return w.values, nil
}

// arg writes one array argument.
func (w *wire) arg(oid uint32, a any) error {
	switch v := a.(type) {
	case []string:
		if oid == oidTextArr {
			w.header(oidText, len(v), false)
			for _, s := range v {
				w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(s)))
				w.buf = append(w.buf, s...)
			}
			return nil
		}
	case []int64:
		if ok, err := writeInts(w, oid, v); ok {
			return err
		}
	case []int:
		if ok, err := writeInts(w, oid, v); ok {
			return err
		}
	case []bool:
		if oid == oidBoolArr {
			w.header(oidBool, len(v), false)
			for _, b := range v {
				w.buf = binary.BigEndian.AppendUint32(w.buf, 1)
				if b {
					w.buf = append(w.buf, 1)
				} else {
					w.buf = append(w.buf, 0)
				}
			}
			return nil
		}
	case [][]byte:
		if oid == oidByteaArr {
			nullable(w, oidBytea, v, func(b []byte) bool { return b == nil }, func(b []byte) {
				w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(b)))
				w.buf = append(w.buf, b...)
			})
			return nil
		}
	case []time.Time:
		if oid == oidTstzArr {
			w.header(oidTimestamptz, len(v), false)
			for _, t := range v {
				w.time(t)
			}
			return nil
		}
	case []*time.Time:
		if oid == oidTstzArr {
			nullable(w, oidTimestamptz, v, func(t *time.Time) bool { return t == nil }, func(t *time.Time) { w.time(*t) })
			return nil
		}
	}
	return fmt.Errorf("cannot write a %T as type %d", a, oid)
}

// writeInts writes v as a bigint[] or int[] argument, as oid says; ok is
// false for any other type.
func writeInts[T int | int64](w *wire, oid uint32, v []T) (ok bool, err error) {
	size, elem := uint32(8), uint32(oidInt8)
	switch oid {
	case oidInt8Arr:
	case oidInt4Arr:
		size, elem = 4, oidInt4
	default:
		return false, nil
	}
	w.header(elem, len(v), false)
	for _, n := range v {
		w.buf = binary.BigEndian.AppendUint32(w.buf, size)
		if size == 8 {
			w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(n))
			continue
		}
		if int64(int32(n)) != int64(n) {
			return true, fmt.Errorf("%d is out of range for int", n)
		}
		w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(n))
	}
	return true, nil
}

// nullable writes v, an array of elem whose elements null says are NULL,
// the others with write.
func nullable[T any](w *wire, elem uint32, v []T, null func(T) bool, write func(T)) {
	w.header(elem, len(v), slices.ContainsFunc(v, null))
	for _, e := range v {
		if null(e) {
			w.buf = binary.BigEndian.AppendUint32(w.buf, 0xffffffff)
			continue
		}
		write(e)
	}
}

// header writes the header of a one-dimensional array of n elements. An
// empty array is written, as pgx writes it, with a dimension of length 0.
func (w *wire) header(elem uint32, n int, nulls bool) {
	w.buf = binary.BigEndian.AppendUint32(w.buf, 1) // dimensions
	if nulls {
		w.buf = binary.BigEndian.AppendUint32(w.buf, 1)
	} else {
		w.buf = binary.BigEndian.AppendUint32(w.buf, 0)
	}
	w.buf = binary.BigEndian.AppendUint32(w.buf, elem)
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(n))
	w.buf = binary.BigEndian.AppendUint32(w.buf, 1) // the lower bound
}

// time writes a timestamptz element: microseconds since 2000-01-01 UTC.
func (w *wire) time(t time.Time) {
	us := t.Unix()*1000000 + int64(t.Nanosecond())/1000 - y2k
	w.buf = binary.BigEndian.AppendUint32(w.buf, 8)
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(us))
}
