package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/pebble" // registers pebble://; store/hbase registers hbase://
)

// A Store is HBase's data model, the same on the embedded store and on a
// cluster: a table of rows sorted by key, each a map of family:qualifier
// to versions by timestamp. Here, two versions of one cell and a scan of a
// key prefix.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denorm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := store.Open(ctx, "pebble://"+dir) // hbase://thrift-host:9090 for a cluster
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	spec := store.TableSpec{Name: "orders", Families: []store.FamilySpec{{Name: "d", MaxVersions: 3}}}
	if err := st.CreateTable(ctx, spec); err != nil {
		log.Fatal(err)
	}
	put := func(row, value string, ts int64) {
		m := store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{
			{Kind: store.Put, Family: "d", Qualifier: []byte("s"), Timestamp: ts, Value: []byte(value)}}}
		if err := st.Mutate(ctx, "orders", m); err != nil {
			log.Fatal(err)
		}
	}
	put("c1\x00o1", "placed", 1)
	put("c1\x00o1", "paid", 2)
	put("c1\x00o2", "placed", 1)
	put("c2\x00o3", "shipped", 5)

	row, err := st.Get(ctx, "orders", store.Get{Row: []byte("c1\x00o1"), MaxVersions: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range row.Cells {
		fmt.Printf("%s d:%s @%d = %s\n", store.Printable(row.Key), c.Qualifier, c.Timestamp, c.Value)
	}

	// Customer c1's orders: the rows in [c1\x00, c1\x01).
	sc, err := st.Scan(ctx, "orders", store.Scan{Start: []byte("c1\x00"), Stop: []byte("c1\x01")})
	if err != nil {
		log.Fatal(err)
	}
	defer sc.Close()
	for sc.Next(ctx) {
		fmt.Println(store.Printable(sc.Row().Key))
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}

	_, err = st.Get(ctx, "no_such_table", store.Get{Row: []byte("x")})
	fmt.Println(errors.Is(err, store.ErrTableNotFound))
	// Output:
	// c1\x00o1 d:s @2 = paid
	// c1\x00o1 d:s @1 = placed
	// c1\x00o1
	// c1\x00o2
	// true
}

// Increment and CheckAndMutate are atomic on one row, as in HBase: the
// building blocks of counters and of compare-and-set.
func ExampleStore_checkAndMutate() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denorm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, "pebble://"+dir)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateTable(ctx, store.TableSpec{Name: "units", Families: []store.FamilySpec{{Name: "c"}}}); err != nil {
		log.Fatal(err)
	}
	row := []byte("sku7")
	n, err := st.Increment(ctx, "units", store.Increment{Row: row, Columns: []store.IncrementColumn{{Family: "c", Qualifier: []byte("u"), Delta: 2}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after increment:", n[0])

	// Claim the row only if nobody has: the first call wins, the second
	// sees the claim.
	claim := store.RowMutation{Row: row, Mutations: []store.Mutation{
		{Kind: store.Put, Family: "c", Qualifier: []byte("owner"), Timestamp: store.LatestTimestamp, Value: []byte("job-1")}}}
	for range 2 {
		ok, err := st.CheckAndMutate(ctx, "units", store.Condition{Family: "c", Qualifier: []byte("owner"), Absent: true}, claim)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("claimed:", ok)
	}
	// Output:
	// after increment: 2
	// claimed: true
	// claimed: false
}
