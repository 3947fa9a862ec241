package rowkey

import "testing"

func BenchmarkEncode(b *testing.B) {
	s := mustSpec(b, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId")
	v := Values{"orderId": "o-000123456", "status": "SHIPPED", "placedAt": int64(1764460800000)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Encode(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	s := mustSpec(b, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId")
	key, err := s.Encode(Values{"orderId": "o-000123456", "status": "SHIPPED", "placedAt": int64(1764460800000)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Decode(key); err != nil {
			b.Fatal(err)
		}
	}
}
