// Package gen makes realistic change-event streams for trying denorm, for
// tests and for benchmarks: seeded, so a stream can be made again.
package gen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"time"
)

// OrdersOptions shape an order stream for examples/orders.yaml.
type OrdersOptions struct {
	Events    int     // events to write
	Seed      int64   // the same seed gives the same stream
	Customers int     // 0 means Events/5 + 1
	SKUs      int     // 0 means 1000
	Reorder   float64 // share of events swapped with a later neighbour
	Duplicate float64 // share of events written twice
	Start     time.Time
	// Deletes is the share of orders that end deleted (a GDPR erasure,
	// say); 0 means none.
	Deletes float64
	// Renames is the share of events that rename a product, whose name
	// orders copy live; 0 means none.
	Renames float64
	// PriceChanges is the share of events that change a product's price
	// and keep its name: a new version of the product whose live-copied
	// field stays as it was. 0 means none.
	PriceChanges float64
	// HotSKU is the share of order items on one SKU (sku00000), on top of
	// the zipf spread: a best seller, the skew that makes one counter row
	// take a large share of the traffic. 0 means none.
	HotSKU float64
}

// order is one order's evolving state.
type order struct {
	id, customer string
	placedAt     int64
	status       string
	version      int64
	items        []map[string]any
	total        int64
	done         bool
}

// next status in the lifecycle OPEN -> PAID -> SHIPPED, with a chance of
// CANCELLED from OPEN or PAID.
func (o *order) advance(r *rand.Rand) {
	switch o.status {
	case "OPEN":
		if r.Intn(10) == 0 {
			o.status, o.done = "CANCELLED", true
		} else {
			o.status = "PAID"
		}
	case "PAID":
		if r.Intn(20) == 0 {
			o.status, o.done = "CANCELLED", true
		} else {
			o.status, o.done = "SHIPPED", true
		}
	}
}

// Orders writes an order event stream as JSON lines.
func Orders(w io.Writer, opts OrdersOptions) error {
	if opts.Customers <= 0 {
		opts.Customers = opts.Events/5 + 1
	}
	if opts.SKUs <= 0 {
		opts.SKUs = 1000
	}
	if opts.Start.IsZero() {
		opts.Start = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	}
	r := rand.New(rand.NewSource(opts.Seed))
	custZipf := rand.NewZipf(r, 1.1, 1, uint64(opts.Customers-1))
	skuZipf := rand.NewZipf(r, 1.05, 1, uint64(opts.SKUs-1))
	// Reordering and duplication draw from their own source, so that the
	// same seed gives the same orders with or without them.
	mess := rand.New(rand.NewSource(opts.Seed ^ 0x5eed))
	// The best seller draws from its own source too.
	hot := rand.New(rand.NewSource(opts.Seed ^ 0x407))
	bw := bufio.NewWriterSize(w, 1<<20)
	var live []*order
	clock := opts.Start.UnixMilli()
	nextID := 0
	var held []byte // an event held back to be written after the next one
	emit := func(line []byte) error {
		if held != nil {
			if _, err := bw.Write(line); err != nil {
				return err
			}
			_, err := bw.Write(held)
			held = nil
			return err
		}
		if opts.Reorder > 0 && mess.Float64() < opts.Reorder {
			held = line
			return nil
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
		if opts.Duplicate > 0 && mess.Float64() < opts.Duplicate {
			_, err := bw.Write(line)
			return err
		}
		return nil
	}
	// A product's version grows with every event of it; its name's
	// revision only with renames.
	productVersion, productRev := map[string]int64{}, map[string]int64{}
	product := func(rename bool) error {
		sku := fmt.Sprintf("sku%05d", skuZipf.Uint64())
		productVersion[sku]++
		if rename {
			productRev[sku] = productVersion[sku]
		}
		v := productVersion[sku]
		b, err := json.Marshal(map[string]any{"id": fmt.Sprintf("%s-v%d", sku, v), "entity": "product", "key": sku,
			"version": v, "op": "upsert", "state": map[string]any{"sku": sku, "name": fmt.Sprintf("Product %s (rev %d)", sku, productRev[sku]),
				"priceCents": int64(100 + r.Intn(9900))}})
		if err != nil {
			return err
		}
		return emit(append(b, '\n'))
	}
	for n := 0; n < opts.Events; n++ {
		clock += int64(1 + r.Intn(2000))
		if opts.Renames > 0 && r.Float64() < opts.Renames {
			if err := product(true); err != nil {
				return err
			}
			continue
		}
		// Drawn only when asked for, so that streams without price
		// changes stay what they were.
		if opts.PriceChanges > 0 && r.Float64() < opts.PriceChanges {
			if err := product(false); err != nil {
				return err
			}
			continue
		}
		var o *order
		// New orders and updates of open ones, about half and half.
		if len(live) == 0 || r.Intn(2) == 0 {
			nextID++
			o = &order{
				id:       fmt.Sprintf("o%08d", nextID),
				customer: fmt.Sprintf("c%06d", custZipf.Uint64()),
				placedAt: clock,
				status:   "OPEN",
			}
			line := int32(0)
			for i := 0; i < 1+r.Intn(10); i++ {
				line++
				sku := fmt.Sprintf("sku%05d", skuZipf.Uint64())
				if opts.HotSKU > 0 && hot.Float64() < opts.HotSKU {
					sku = "sku00000"
				}
				q := int64(1 + r.Intn(5))
				price := int64(100 + r.Intn(9900))
				o.items = append(o.items, map[string]any{"line": line, "sku": sku, "quantity": q,
					"name": "Product " + sku, "priceCents": price})
				o.total += q * price
			}
			live = append(live, o)
		} else {
			i := r.Intn(len(live))
			o = live[i]
			if opts.Deletes > 0 && r.Float64() < opts.Deletes {
				o.version++
				b, err := json.Marshal(map[string]any{"id": fmt.Sprintf("%s-v%d", o.id, o.version), "entity": "order",
					"key": o.id, "version": o.version, "op": "delete",
					"hints": map[string]any{"customerId": o.customer, "placedAt": o.placedAt, "status": o.status}})
				if err != nil {
					return err
				}
				live = append(live[:i], live[i+1:]...)
				if err := emit(append(b, '\n')); err != nil {
					return err
				}
				continue
			}
			o.advance(r)
			if o.done {
				live = append(live[:i], live[i+1:]...)
			}
		}
		o.version++
		b, err := json.Marshal(map[string]any{
			"id": fmt.Sprintf("%s-v%d", o.id, o.version), "entity": "order", "key": o.id, "version": o.version, "op": "upsert",
			"state": map[string]any{"orderId": o.id, "customerId": o.customer, "status": o.status,
				"placedAt": o.placedAt, "totalCents": o.total, "items": o.items},
		})
		if err != nil {
			return err
		}
		if err := emit(append(b, '\n')); err != nil {
			return err
		}
	}
	if held != nil {
		if _, err := bw.Write(held); err != nil {
			return err
		}
	}
	return bw.Flush()
}
