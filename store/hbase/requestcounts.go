package hbase

// KeepsRequestCounts reports that this backend cannot give region request
// counts: Thrift2 has no call for them, so Regions leaves them 0. A caller
// that shows counts says "unknown" instead, or reads them from the region
// servers' /jmx.
func (s *Store) KeepsRequestCounts() bool { return false }
