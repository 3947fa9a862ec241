package event

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
)

// sameAsFull fails unless the one-pass decoder, when it takes a line on,
// returns exactly the event the full decoder returns for it. It reports
// whether the one-pass decoder took the line.
func sameAsFull(t *testing.T, p *schema.Plan, line []byte) bool {
	t.Helper()
	line, err := checkLine(line)
	if err != nil {
		return false // Decode refuses these before either decoder runs
	}
	fast, ok := fastDecode(p, line)
	if !ok {
		return false
	}
	full, err := decodeFull(p, line)
	if err != nil {
		t.Fatalf("one pass took %q, the full decoder refuses it: %v", line, err)
	}
	if !reflect.DeepEqual(fast, full) {
		t.Fatalf("line %q:\none pass %#v\nfull     %#v", line, fast, full)
	}
	return true
}

// mutate changes a line in one of the ways producers and transports get
// lines wrong (or merely unusual): bytes dropped, repeated or flipped, a
// value swapped for another JSON value, space, escapes, repeated or
// differently cased names.
func mutate(r *rand.Rand, line []byte) []byte {
	b := bytes.Clone(line)
	at := func() int { return r.Intn(len(b) + 1) }
	insert := func(s string) []byte {
		i := at()
		return append(b[:i:i], append([]byte(s), b[i:]...)...)
	}
	pieces := []string{" ", "\t", "\n", ",", ":", "{", "}", "[", "]", `"`, `\`, `\u0041`, `\ud83d\ude00`, `\n`, `\"`,
		"null", "true", "false", "0", "-0", "1e3", "1.5", "01", "-", `"x"`, `""`, `{}`, `[]`, `"state":null`,
		`"hints":{}`, `"Entity":"order"`, `"id":"a",`, `"op":"delete",`, `"version":2,`, "9223372036854775807", `"2026-10-04T10:00:00Z"`}
	switch r.Intn(6) {
	case 0:
		if len(b) > 0 {
			i := r.Intn(len(b))
			b = append(b[:i], b[i+1:]...)
		}
	case 1:
		if len(b) > 0 {
			b[r.Intn(len(b))] ^= byte(1 << r.Intn(7))
		}
	case 2:
		b = insert(pieces[r.Intn(len(pieces))])
	case 3:
		// A token replaced: the span between two delimiters.
		i, j := at(), at()
		if i > j {
			i, j = j, i
		}
		b = append(b[:i:i], append([]byte(pieces[r.Intn(len(pieces))]), b[j:]...)...)
	case 4:
		if len(b) > 0 {
			i, j := at(), at()
			if i > j {
				i, j = j, i
			}
			b = append(b[:j:j], append(bytes.Clone(b[i:j]), b[j:]...)...)
		}
	default:
		b = bytes.ReplaceAll(b, []byte(`":`), []byte(`" : `))
	}
	return b
}

// The one-pass decoder against the full one, on a generated stream (upserts,
// deletes, renames, messy ordering) and on seeded mutations of its lines.
func TestFastDecodeMatchesFull(t *testing.T) {
	p := ordersPlan(t)
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: 2000, Seed: 7, Deletes: 0.05, Renames: 0.05}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	lines = append(lines, []byte(strings.ReplaceAll(goodOrder, "\n", " ")), []byte(strings.ReplaceAll(goodOrder, "\n", "")))
	taken := 0
	for _, l := range lines {
		if !sameAsFull(t, p, l) {
			t.Fatalf("the one-pass decoder left a plain generated line to the full one: %s", l)
		}
		taken++
	}
	r := rand.New(rand.NewSource(11))
	mutants, tookMutants := 0, 0
	for range 60000 {
		l := lines[r.Intn(len(lines))]
		for n := 1 + r.Intn(3); n > 0; n-- {
			l = mutate(r, l)
		}
		mutants++
		if sameAsFull(t, p, l) {
			tookMutants++
		}
	}
	// Both sides of the comparison must be exercised: mutants the one
	// pass takes (space, escapes, reordered values) and mutants it leaves.
	if tookMutants < mutants/20 || tookMutants > mutants*19/20 {
		t.Fatalf("the one pass took %d of %d mutants: the mutations test one side only", tookMutants, mutants)
	}
	t.Logf("%d generated lines, %d of %d mutants taken by the one pass", taken, tookMutants, mutants)
}

// Lines the one pass must leave to the full decoder, for the errors (or the
// quirks of encoding/json) to be the full decoder's.
func TestFastDecodeLeaves(t *testing.T) {
	p := ordersPlan(t)
	for _, line := range []string{
		`{"entity":"product","key":"s","version":2,"state":{"sku":"s","name":"n"},"version":3}`,            // a repeated name
		`{"Entity":"product","key":"s","version":2,"state":{"sku":"s","name":"n"}}`,                        // a name matched without case
		`{"entity":"product","key":"s","version":2,"state":{"sku":"s","name":"\ud83d\ude00"}}`,             // a surrogate pair
		`{"entity":"product","key":"s","version":"2","state":{"sku":"s"}}`,                                 // a quoted version
		`{"entity":"product","key":"s","version":2,"state":{"sku":"t"}}`,                                   // key and state differ
		`{"entity":"order","key":"o","version":1,"state":{"orderId":"o","items":[{"line":1},{"line":1}]}}`, // a repeated element key
		`{"entity":"product","key":"s","version":2,"state":{"sku":"s"}} {}`,                                // two values
		`{"entity":"product","key":"s","version":2,"op":"delete","state":{"sku":"s"}}`,                     // a delete with a state
		`{"entity":"product","key":"s","version":2,"state":{"sku":"s","x":1}}`,                             // an unknown field
	} {
		if _, ok := fastDecode(p, []byte(line)); ok {
			t.Errorf("the one pass took %s", line)
		}
		// Decode answers as the full decoder does: its event or its error.
		ev, err := Decode(p, []byte(line))
		full, ferr := decodeFull(p, []byte(line))
		if fmt.Sprint(err) != fmt.Sprint(ferr) || !reflect.DeepEqual(ev, full) {
			t.Errorf("%s: Decode gave %v, %v; the full decoder %v, %v", line, ev, err, full, ferr)
		}
	}
}

func FuzzDecodeFast(f *testing.F) {
	p := ordersPlan(f)
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"entity":"product","key":"s","version":2,"state":{"sku":"s","name":"a\"b\u00e9","priceCents":1e2}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsFull(t, p, line)
	})
}
