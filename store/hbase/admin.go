package hbase

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

// CreateTable creates a table with its families and split keys. HBase's
// createTable is synchronous: the regions are online when it returns.
func (s *Store) CreateTable(ctx context.Context, spec store.TableSpec) error {
	what := "create table " + spec.Name
	if err := store.CheckTableName(spec.Name); err != nil {
		return fmt.Errorf("hbase: create table: %w", err)
	}
	if len(spec.Families) == 0 {
		return fmt.Errorf("hbase: %s: a table needs at least one family", what)
	}
	desc := &hbase2.TTableDescriptor{TableName: s.tableName(spec.Name)}
	attrs, err := tableAttributes(spec)
	if err != nil {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	if len(attrs) > 0 {
		desc.Attributes = attrs
	}
	seen := map[string]bool{}
	for _, f := range spec.Families {
		if seen[f.Name] {
			return fmt.Errorf("hbase: %s: family %s is listed twice", what, f.Name)
		}
		seen[f.Name] = true
		d, err := familyDescriptor(f)
		if err != nil {
			return fmt.Errorf("hbase: %s: %w", what, err)
		}
		desc.Columns = append(desc.Columns, d)
	}
	for i, k := range spec.SplitKeys {
		if len(k) == 0 {
			return fmt.Errorf("hbase: %s: split key %d is empty", what, i)
		}
		if i > 0 && bytes.Compare(spec.SplitKeys[i-1], k) >= 0 {
			return fmt.Errorf("hbase: %s: split keys must be sorted and distinct; %s follows %s", what, store.Printable(k), store.Printable(spec.SplitKeys[i-1]))
		}
	}
	if len(spec.SplitKeys) > 0 && s.opts.Framed {
		// HBase's gateway takes each split key's whole backing array; on
		// a framed connection that is the entire request frame, so the
		// keys arrive corrupted (and a single one would be accepted).
		return fmt.Errorf("hbase: %s: the Thrift2 gateway corrupts split keys sent over the framed transport; create pre-split tables over transport=buffered: %w", what, store.ErrUnsupported)
	}
	exists, err := s.tableExists(ctx, spec.Name)
	if err != nil {
		return s.explain(ctx, what, "", nil, err)
	}
	if exists {
		return fmt.Errorf("hbase: %s: %w", what, store.ErrTableExists)
	}
	err = s.callAdmin(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
		return c.CreateTable(ctx, desc, spec.SplitKeys)
	})
	if err != nil {
		return s.explain(ctx, what, "", nil, err)
	}
	return nil
}

// DescribeTable reads the table's families from HBase and its split keys
// from its regions' boundaries, which are the ones it was created with
// until a region splits.
func (s *Store) DescribeTable(ctx context.Context, table string) (store.TableSpec, error) {
	what := "describe table " + table
	var desc *hbase2.TTableDescriptor
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		desc, err = c.GetTableDescriptor(ctx, s.tableName(table))
		return err
	})
	if err != nil {
		return store.TableSpec{}, s.explain(ctx, what, table, nil, err)
	}
	spec := store.TableSpec{Name: table}
	readTableAttributes(&spec, desc.GetAttributes())
	for _, d := range desc.GetColumns() {
		spec.Families = append(spec.Families, familySpec(d))
	}
	sort.Slice(spec.Families, func(i, j int) bool { return spec.Families[i].Name < spec.Families[j].Name })
	regions, err := s.Regions(ctx, table)
	if err != nil {
		return store.TableSpec{}, fmt.Errorf("hbase: %s: %w", what, err)
	}
	for _, r := range regions[1:] {
		spec.SplitKeys = append(spec.SplitKeys, r.Start)
	}
	return spec, nil
}

// ListTables lists the tables of the store's namespace, by name.
func (s *Store) ListTables(ctx context.Context) ([]string, error) {
	var names []*hbase2.TTableName
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		names, err = c.GetTableNamesByNamespace(ctx, s.opts.Namespace)
		return err
	})
	if err != nil {
		return nil, s.explain(ctx, "list tables of namespace "+s.opts.Namespace, "", nil, err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, string(n.Qualifier))
	}
	slices.Sort(out)
	return out, nil
}

// DropTable disables the table if needed, then deletes it.
func (s *Store) DropTable(ctx context.Context, table string) error {
	what := "drop table " + table
	name := s.tableName(table)
	var enabled bool
	err := s.call(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) (err error) {
		enabled, err = c.IsTableEnabled(ctx, name)
		return err
	})
	if err != nil {
		return s.explain(ctx, what, table, nil, err)
	}
	if enabled {
		err := s.callAdmin(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
			return c.DisableTable(ctx, name)
		})
		// Someone else may have disabled it meanwhile; deleteTable below
		// says whether the table can go.
		if err != nil {
			if msg, ok := serverMessage(err); !ok || !bytes.Contains([]byte(msg), []byte("TableNotEnabledException")) {
				return s.explain(ctx, what+": disable", table, nil, err)
			}
		}
	}
	err = s.callAdmin(ctx, func(ctx context.Context, c *hbase2.THBaseServiceClient) error {
		return c.DeleteTable(ctx, name)
	})
	if err != nil {
		return s.explain(ctx, what+": delete", table, nil, err)
	}
	return nil
}

// MajorCompact cannot be done: THBaseService has no compaction call.
func (s *Store) MajorCompact(ctx context.Context, table string) error {
	exists, err := s.tableExists(ctx, table)
	if err != nil {
		return s.explain(ctx, "major compact "+table, "", nil, err)
	}
	if !exists {
		return fmt.Errorf("hbase: major compact %s: %w", table, store.ErrTableNotFound)
	}
	return fmt.Errorf("hbase: major compact %s: HBase's Thrift2 gateway has no compaction call; run major_compact '%s' in the HBase shell: %w",
		table, table, store.ErrUnsupported)
}

// Table values HBase keeps under these names (TableDescriptor), and the
// table's max row size, which a region reads from its table's values.
const (
	attrRegionReplication = "REGION_REPLICATION"
	attrSplitPolicy       = "SPLIT_POLICY"
	attrMaxRowSize        = "hbase.table.max.rowsize"
)

var splitPolicies = func() map[string]string {
	m := map[string]string{}
	for _, name := range store.SplitPolicies() {
		m[name] = store.SplitPolicyClass(name)
	}
	return m
}()

func tableAttributes(spec store.TableSpec) (map[string][]byte, error) {
	attrs := map[string][]byte{}
	if spec.RegionReplicas < 0 {
		return nil, fmt.Errorf("region replicas %d is negative", spec.RegionReplicas)
	}
	if spec.RegionReplicas > 1 {
		attrs[attrRegionReplication] = []byte(strconv.Itoa(spec.RegionReplicas))
	}
	if spec.SplitPolicy != "" {
		class, ok := splitPolicies[spec.SplitPolicy]
		if !ok {
			return nil, fmt.Errorf("split policy %q: want one of %v", spec.SplitPolicy, store.SplitPolicies())
		}
		attrs[attrSplitPolicy] = []byte(class)
	}
	if spec.MaxRowSize < 0 {
		return nil, fmt.Errorf("max row size %d is negative", spec.MaxRowSize)
	}
	if spec.MaxRowSize > 0 {
		attrs[attrMaxRowSize] = []byte(strconv.FormatInt(spec.MaxRowSize, 10))
	}
	return attrs, nil
}

func readTableAttributes(spec *store.TableSpec, attrs map[string][]byte) {
	if n, err := strconv.Atoi(string(attrs[attrRegionReplication])); err == nil && n > 1 {
		spec.RegionReplicas = n
	}
	class := string(attrs[attrSplitPolicy])
	for name, c := range splitPolicies {
		if c == class {
			spec.SplitPolicy = name
		}
	}
	if n, err := strconv.ParseInt(string(attrs[attrMaxRowSize]), 10, 64); err == nil && n > 0 {
		spec.MaxRowSize = n
	}
}
