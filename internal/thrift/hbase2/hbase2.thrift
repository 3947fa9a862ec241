// The part of HBase's Thrift2 gateway protocol (THBaseService, HBase 2.x)
// that denorm's HBase store speaks.
//
// This is a subset written for denorm: only the structs, enums and methods
// the store calls are declared. Every field id, type and enum value below is
// the one HBase's own IDL uses, so the generated client is wire-compatible
// with org.apache.hadoop.hbase.thrift2.ThriftServer. Fields HBase defines
// that the store never sets are left out; Thrift skips unknown fields it
// receives, so their absence is harmless. Names of a few fields differ from
// HBase's spelling; only ids and types travel on the wire.

namespace go hbase2

// Timestamps in [minStamp, maxStamp).
struct TTimeRange {
  1: required i64 minStamp,
  2: required i64 maxStamp
}

// A family, or one column of it when qualifier is set.
struct TColumn {
  1: required binary family,
  2: optional binary qualifier,
  3: optional i64 timestamp
}

// One cell. type is the KeyValue type code (4 for a put) on results.
struct TColumnValue {
  1: required binary family,
  2: required binary qualifier,
  3: required binary value,
  4: optional i64 timestamp,
  5: optional binary tags,
  6: optional i8 type
}

struct TColumnIncrement {
  1: required binary family,
  2: required binary qualifier,
  3: optional i64 amount = 1
}

// A row's cells; row is unset when nothing was found.
struct TResult {
  1: optional binary row,
  2: required list<TColumnValue> columnValues,
  3: optional bool stale = false,
  4: optional bool partial = false
}

// DELETE_COLUMN removes one version (KeyValue type Delete), DELETE_COLUMNS
// every version at or below the timestamp (DeleteColumn), DELETE_FAMILY a
// whole family at or below it (DeleteFamily).
enum TDeleteType {
  DELETE_COLUMN = 0,
  DELETE_COLUMNS = 1,
  DELETE_FAMILY = 2,
  DELETE_FAMILY_VERSION = 3
}

enum TDurability {
  USE_DEFAULT = 0,
  SKIP_WAL = 1,
  ASYNC_WAL = 2,
  SYNC_WAL = 3,
  FSYNC_WAL = 4
}

struct TGet {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TTimeRange timeRange,
  5: optional i32 maxVersions,
  6: optional binary filterString,
  7: optional map<binary, binary> attributes
}

struct TPut {
  1: required binary row,
  2: required list<TColumnValue> columnValues,
  3: optional i64 timestamp,
  5: optional map<binary, binary> attributes,
  6: optional TDurability durability
}

// Without columns the delete covers the whole row at timestamp. With
// columns, deleteType applies to every one of them.
struct TDelete {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TDeleteType deleteType = 1,
  6: optional map<binary, binary> attributes,
  7: optional TDurability durability
}

struct TIncrement {
  1: required binary row,
  2: required list<TColumnIncrement> columns,
  4: optional map<binary, binary> attributes,
  5: optional TDurability durability,
  7: optional bool returnResults
}

struct TScan {
  1: optional binary startRow,
  2: optional binary stopRow,
  3: optional list<TColumn> columns,
  4: optional i32 caching,
  5: optional i32 maxVersions = 1,
  6: optional TTimeRange timeRange,
  7: optional binary filterString,
  8: optional i32 batchSize,
  9: optional map<binary, binary> attributes,
  11: optional bool reversed,
  12: optional bool cacheBlocks,
  15: optional i32 limit
}

// One put or one delete inside a TRowMutations.
union TMutation {
  1: TPut put,
  2: TDelete deleteSingle
}

// Mutations of one row, applied atomically by mutateRow and checkAndMutate.
struct TRowMutations {
  1: required binary row,
  2: required list<TMutation> mutations
}

struct THRegionInfo {
  1: required i64 regionId,
  2: required binary tableName,
  3: optional binary startKey,
  4: optional binary endKey,
  5: optional bool offline,
  6: optional bool split,
  7: optional i32 replicaId
}

struct TServerName {
  1: required string hostName,
  2: optional i32 port,
  3: optional i64 startCode
}

struct THRegionLocation {
  1: required TServerName serverName,
  2: required THRegionInfo regionInfo
}

enum TCompareOperator {
  LESS = 0,
  LESS_OR_EQUAL = 1,
  EQUAL = 2,
  NOT_EQUAL = 3,
  GREATER_OR_EQUAL = 4,
  GREATER = 5,
  NO_OP = 6
}

enum TBloomFilterType {
  NONE = 0,
  ROW = 1,
  ROWCOL = 2,
  ROWPREFIX_FIXED_LENGTH = 3
}

enum TCompressionAlgorithm {
  LZO = 0,
  GZ = 1,
  NONE = 2,
  SNAPPY = 3,
  LZ4 = 4,
  BZIP2 = 5,
  ZSTD = 6
}

// Ids 1, 5 and 6 are reserved or retired in HBase.
enum TDataBlockEncoding {
  NONE = 0,
  PREFIX = 2,
  DIFF = 3,
  FAST_DIFF = 4,
  ROW_INDEX_V1 = 7
}

struct TTableName {
  1: optional binary ns,
  2: required binary qualifier
}

// HBase spells field 5 "bloomnFilterType"; the name is not on the wire.
struct TColumnFamilyDescriptor {
  1: required binary name,
  2: optional map<binary, binary> attributes,
  3: optional map<string, string> configuration,
  4: optional i32 blockSize,
  5: optional TBloomFilterType bloomFilterType,
  6: optional TCompressionAlgorithm compressionType,
  8: optional TDataBlockEncoding dataBlockEncoding,
  10: optional i32 maxVersions,
  11: optional i32 minVersions,
  13: optional i32 timeToLive,
  20: optional bool inMemory
}

struct TTableDescriptor {
  1: required TTableName tableName,
  2: optional list<TColumnFamilyDescriptor> columns,
  3: optional map<binary, binary> attributes,
  4: optional TDurability durability
}

// Which of the region server's two online ring buffers to read: calls over
// hbase.ipc.warn.response.time, or responses over hbase.ipc.warn.response.size.
enum TLogType {
  SLOW_LOG = 1,
  LARGE_LOG = 2
}

enum TFilterByOperator {
  AND,
  OR
}

// Unset fields do not filter; limit caps the records per call (HBase's
// default is 10).
struct TLogQueryFilter {
  1: optional string regionName,
  2: optional string clientAddress,
  3: optional string tableName,
  4: optional string userName,
  5: optional i32 limit = 10,
  6: optional TLogType logType = 1,
  7: optional TFilterByOperator filterByOperator = TFilterByOperator.OR
}

// One slow or large call as a region server's ring buffer kept it (HBase
// 2.4 and later, with hbase.regionserver.slowlog.buffer.enabled).
struct TOnlineLogRecord {
  1: required i64 startTime,
  2: required i32 processingTime,
  3: required i32 queueTime,
  4: required i64 responseSize,
  5: required string clientAddress,
  6: required string serverClass,
  7: required string methodName,
  8: required string callDetails,
  9: required string param,
  10: required string userName,
  11: required i32 multiGetsCount,
  12: required i32 multiMutationsCount,
  13: required i32 multiServiceCalls,
  14: optional string regionName
}

// Any failure inside HBase. message is the Java exception's message, which
// does not always name the exception's class; canRetry (newer 2.x servers)
// is false for HBase's DoNotRetryIOException family.
exception TIOError {
  1: optional string message,
  2: optional bool canRetry
}

exception TIllegalArgument {
  1: optional string message
}

service THBaseService {
  TResult get(1: required binary table, 2: required TGet tget) throws (1: TIOError io)

  list<TResult> getMultiple(1: required binary table, 2: required list<TGet> tgets)
    throws (1: TIOError io)

  void put(1: required binary table, 2: required TPut tput) throws (1: TIOError io)

  void putMultiple(1: required binary table, 2: required list<TPut> tputs)
    throws (1: TIOError io)

  void deleteSingle(1: required binary table, 2: required TDelete tdelete)
    throws (1: TIOError io)

  list<TDelete> deleteMultiple(1: required binary table, 2: required list<TDelete> tdeletes)
    throws (1: TIOError io)

  TResult increment(1: required binary table, 2: required TIncrement tincrement)
    throws (1: TIOError io)

  i32 openScanner(1: required binary table, 2: required TScan tscan) throws (1: TIOError io)

  list<TResult> getScannerRows(1: required i32 scannerId, 2: i32 numRows = 1)
    throws (1: TIOError io, 2: TIllegalArgument ia)

  void closeScanner(1: required i32 scannerId) throws (1: TIOError io, 2: TIllegalArgument ia)

  void mutateRow(1: required binary table, 2: required TRowMutations trowMutations)
    throws (1: TIOError io)

  list<TResult> getScannerResults(1: required binary table, 2: required TScan tscan,
                                  3: i32 numRows = 1)
    throws (1: TIOError io)

  list<THRegionLocation> getAllRegionLocations(1: required binary table)
    throws (1: TIOError io)

  // HBase documents an unset value as "the column is absent", but its
  // handler reads the value unconditionally; an empty value is what works,
  // and HBase takes an empty expected value to mean absent.
  bool checkAndMutate(1: required binary table, 2: required binary row,
                      3: required binary family, 4: required binary qualifier,
                      5: required TCompareOperator compareOperator, 6: binary value,
                      7: required TRowMutations rowMutations)
    throws (1: TIOError io)

  TTableDescriptor getTableDescriptor(1: required TTableName table) throws (1: TIOError io)

  bool tableExists(1: TTableName tableName) throws (1: TIOError io)

  list<TTableDescriptor> getTableDescriptorsByNamespace(1: required string name)
    throws (1: TIOError io)

  list<TTableName> getTableNamesByNamespace(1: required string name) throws (1: TIOError io)

  void createTable(1: required TTableDescriptor desc, 2: list<binary> splitKeys)
    throws (1: TIOError io)

  void deleteTable(1: required TTableName tableName) throws (1: TIOError io)

  void enableTable(1: required TTableName tableName) throws (1: TIOError io)

  void disableTable(1: required TTableName tableName) throws (1: TIOError io)

  bool isTableEnabled(1: required TTableName tableName) throws (1: TIOError io)

  list<TOnlineLogRecord> getSlowLogResponses(1: set<TServerName> serverNames,
                                             2: TLogQueryFilter logQueryFilter)
    throws (1: TIOError io)
}
