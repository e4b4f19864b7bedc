/**
 * hive_metastore.thrift -- hivewire's trimmed copy of the Hive Metastore (HMS) Thrift interface.
 *
 * WHAT IT IS
 *   The subset of Apache Hive's ThriftHiveMetastore service that hivewire uses or has to understand
 *   (databases, tables, partitions, notifications, functions, config, fb303 status, and every method
 *   the shim decodes), with the structs those methods need. Nothing here is invented: every struct
 *   field and every method argument / exception carries exactly Hive's id, name, type and
 *   requiredness, so that the code generated from it is wire-compatible with HMS 2.3, 3.1 and 4.x.
 *   Methods that are not listed here are still forwarded by the shim as raw bytes.
 *
 * CHECKED AGAINST (apache/hive)
 *   4.x : standalone-metastore/metastore-common/src/main/thrift/hive_metastore.thrift
 *         at 0078f1f0aafe72428411112d63c7005a63c3ea42 (4.0.x line, still has get_table) and at
 *         ece1d329cf90304c87510fe9fdf6c9360ab46751 (master: get_table removed, *_req methods added).
 *   3.x : standalone-metastore/src/main/thrift/hive_metastore.thrift (branch-3.0 text; and the
 *         0046932a... branch-3 variant whose Table ids >= 22 differ, see Table below).
 *   2.3 : metastore/if/hive_metastore.thrift as compiled into hive-metastore-2.3.10.jar (the
 *         metaDataMap of every generated Java class was dumped and compared field by field), and
 *         the original 2.3 text as shipped by hmsclient 0.1.1.
 *   fb303.thrift: apache/thrift contrib/fb303/if/fb303.thrift.
 *
 * RULES
 *   - Fields added after 2.3 are optional; ids match Apache Hive; never reuse an id, never
 *     renumber, never change a field's type. Add new Hive fields with Hive's own id, or not at all.
 *   - Where Hive versions disagree, the 4.x form is used and the disagreement is noted inline
 *     ("VERSIONS:" comments).
 *   - Defaults are Hive's, except the `engine` fields, which carry no default here (4.0.x form;
 *     master defaults them to "hive"), so that a decoded request shows what was on the wire.
 *
 * GENERATING
 *   python idl/generate.py          -> rewrites thrift/hivewire_thrift/ (committed; never hand-edit)
 *   python idl/generate.py --check  -> fails if the committed code differs from this IDL
 */

include "fb303.thrift"

namespace java org.apache.hadoop.hive.metastore.api
namespace py hivewire_thrift.hive_metastore

const string DDL_TIME = "transient_lastDdlTime"
const byte ACCESSTYPE_NONE       = 1;
const byte ACCESSTYPE_READONLY   = 2;
const byte ACCESSTYPE_WRITEONLY  = 4;
const byte ACCESSTYPE_READWRITE  = 8;

const string HIVE_FILTER_FIELD_OWNER = "hive_filter_field_owner__"
const string HIVE_FILTER_FIELD_PARAMS = "hive_filter_field_params__"
const string HIVE_FILTER_FIELD_LAST_ACCESS = "hive_filter_field_last_access__"

// ---------------------------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------------------------

enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

// 3.0+
enum SerdeType {
  HIVE = 1,
  SCHEMA_REGISTRY = 2,
}

// 4.x
enum DatabaseType {
  NATIVE = 1,
  REMOTE = 2
}

enum FunctionType {
  JAVA = 1,
}

enum ResourceType {
  JAR     = 1,
  FILE    = 2,
  ARCHIVE = 3,
}

// VERSIONS: 2.3 has only TEST_CAPABILITY; INSERT_ONLY_TABLES is 3.0+.
enum ClientCapability {
  TEST_CAPABILITY = 1,
  INSERT_ONLY_TABLES = 2
}

// ---------------------------------------------------------------------------------------------
// Basic structs
// ---------------------------------------------------------------------------------------------

struct FieldSchema {
  1: string name, // name of the field
  2: string type, // type of the field
  3: string comment
}

// Key-value store passed with create/alter/drop calls; hooks and listeners can read it.
struct EnvironmentContext {
  1: map<string, string> properties
}

struct SQLPrimaryKey {
  1: string table_db,    // table schema
  2: string table_name,  // table name
  3: string column_name, // column name
  4: i32 key_seq,        // sequence number within primary key
  5: string pk_name,     // primary key name
  6: bool enable_cstr,   // Enable/Disable
  7: bool validate_cstr, // Validate/No validate
  8: bool rely_cstr,     // Rely/No Rely
  9: optional string catName // 3.0+
}

struct SQLForeignKey {
  1: string pktable_db,    // primary key table schema
  2: string pktable_name,  // primary key table name
  3: string pkcolumn_name, // primary key column name
  4: string fktable_db,    // foreign key table schema
  5: string fktable_name,  // foreign key table name
  6: string fkcolumn_name, // foreign key column name
  7: i32 key_seq,          // sequence within foreign key
  8: i32 update_rule,      // what happens to foreign key when parent key is updated
  9: i32 delete_rule,      // what happens to foreign key when parent key is deleted
  10: string fk_name,      // foreign key name
  11: string pk_name,      // primary key name
  12: bool enable_cstr,    // Enable/Disable
  13: bool validate_cstr,  // Validate/No validate
  14: bool rely_cstr,      // Rely/No Rely
  15: optional string catName // 3.0+
}

// 3.0+ (2.3 has no SQLUniqueConstraint and later)
struct SQLUniqueConstraint {
  1: string catName,     // table catalog
  2: string table_db,    // table schema
  3: string table_name,  // table name
  4: string column_name, // column name
  5: i32 key_seq,        // sequence number within unique constraint
  6: string uk_name,     // unique key name
  7: bool enable_cstr,   // Enable/Disable
  8: bool validate_cstr, // Validate/No validate
  9: bool rely_cstr,     // Rely/No Rely
}

struct SQLNotNullConstraint {
  1: string catName,     // table catalog
  2: string table_db,    // table schema
  3: string table_name,  // table name
  4: string column_name, // column name
  5: string nn_name,     // not null name
  6: bool enable_cstr,   // Enable/Disable
  7: bool validate_cstr, // Validate/No validate
  8: bool rely_cstr,     // Rely/No Rely
}

struct SQLDefaultConstraint {
  1: string catName,     // catalog name
  2: string table_db,    // table schema
  3: string table_name,  // table name
  4: string column_name, // column name
  5: string default_value,// default value
  6: string dc_name,     // default name
  7: bool enable_cstr,   // Enable/Disable
  8: bool validate_cstr, // Validate/No validate
  9: bool rely_cstr      // Rely/No Rely
}

struct SQLCheckConstraint {
  1: string catName,     // catalog name
  2: string table_db,    // table schema
  3: string table_name,  // table name
  4: string column_name, // column name
  5: string check_expression,// check expression
  6: string dc_name,     // default name
  7: bool enable_cstr,   // Enable/Disable
  8: bool validate_cstr, // Validate/No validate
  9: bool rely_cstr      // Rely/No Rely
}

struct PrivilegeGrantInfo {
  1: string privilege,
  2: i32 createTime,
  3: string grantor,
  4: PrincipalType grantorType,
  5: bool grantOption,
}

struct PrincipalPrivilegeSet {
  1: map<string, list<PrivilegeGrantInfo>> userPrivileges, // user name -> privilege grant info
  2: map<string, list<PrivilegeGrantInfo>> groupPrivileges, // group name -> privilege grant info
  3: map<string, list<PrivilegeGrantInfo>> rolePrivileges, //role name -> privilege grant info
}

// 4.x (truncate_table_req)
struct TruncateTableRequest {
  1: required string dbName,
  2: required string tableName,
  3: optional list<string> partNames,
  4: optional i64 writeId=-1,
  5: optional string validWriteIdList,
  6: optional EnvironmentContext environmentContext
}

struct TruncateTableResponse {
}

// 3.0+: a catalog, as the notification log's ALTER_CATALOG message carries it
struct Catalog {
  1: string name,
  2: optional string description,
  3: string locationUri,
  4: optional i32 createTime // 4.x
}

// 3.0+ (get_catalogs)
struct GetCatalogsResponse {
  1: list<string> names
}

// namespace for tables
struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string, string> parameters, // properties associated with the database
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,        // 3.0+ (also in 2.3.10, HIVE-27868 backport)
  9: optional i32 createTime,             // 4.x: creation time of database in seconds since epoch
  10: optional string managedLocationUri, // 4.x: directory for managed tables
  11: optional DatabaseType type,         // 4.x
  12: optional string connector_name,     // 4.x
  13: optional string remote_dbname       // 4.x
}

// This object holds the information needed by SerDes
struct SerDeInfo {
  1: string name,                   // name of the serde, table name by default
  2: string serializationLib,       // usually the class that implements the extractor & loader
  3: map<string, string> parameters, // initialization parameters
  4: optional string description,        // 3.0+
  5: optional string serializerClass,    // 3.0+
  6: optional string deserializerClass,  // 3.0+
  7: optional SerdeType serdeType        // 3.0+
}

// sort order of a column (column name along with asc(1)/desc(0))
struct Order {
  1: string col,      // sort column name
  2: i32    order     // asc(1) or desc(0)
}

// this object holds all the information about skewed table
// PYTHON: the map key is a list; generate.py post-processes the generated reader so that
// decoded keys are tuples (hashable) for both the pure-Python and the fastbinary decoders.
struct SkewedInfo {
  1: list<string> skewedColNames, // skewed column names
  2: list<list<string>> skewedColValues, //skewed values
  3: map<list<string>, string> skewedColValueLocationMaps, //skewed value to location mappings
}

// this object holds all the information about physical storage of the data belonging to a table
struct StorageDescriptor {
  1: list<FieldSchema> cols,  // required (refer to types defined above)
  2: string location,         // defaults to <warehouse loc>/<db loc>/tablename
  3: string inputFormat,      // SequenceFileInputFormat (binary) or TextInputFormat`  or custom format
  4: string outputFormat,     // SequenceFileOutputFormat (binary) or IgnoreKeyTextOutputFormat or custom format
  5: bool   compressed,       // compressed or not
  6: i32    numBuckets,       // this must be specified if there are any dimension columns
  7: SerDeInfo    serdeInfo,  // serialization and deserialization information
  8: list<string> bucketCols, // reducer grouping columns and clustering columns and bucketing columns`
  9: list<Order>  sortCols,   // sort order of the data in each bucket
  10: map<string, string> parameters, // any user supplied key value hash
  11: optional SkewedInfo skewedInfo, // skewed information
  12: optional bool   storedAsSubDirectories       // stored as subdirectories or not
}

// 3.0+; only set for materialized views.
// VERSIONS: 3.0 has 1-5; 6 materializationTime and 7 sourceTables are 4.x.
struct CreationMetadata {
    1: required string catName,
    2: required string dbName,
    3: required string tblName,
    4: required set<string> tablesUsed,
    5: optional string validTxnList,
    6: optional i64 materializationTime,
    7: optional list<SourceTable> sourceTables
}

// ---------------------------------------------------------------------------------------------
// Column statistics (needed by Table.colStats / Partition.colStats, 4.x)
// VERSIONS: the `histogram` fields and Timestamp stats are 4.x.
// ---------------------------------------------------------------------------------------------

struct BooleanColumnStatsData {
1: required i64 numTrues,
2: required i64 numFalses,
3: required i64 numNulls,
4: optional binary bitVectors
}

struct DoubleColumnStatsData {
1: optional double lowValue,
2: optional double highValue,
3: required i64 numNulls,
4: required i64 numDVs,
5: optional binary bitVectors,
6: optional binary histogram
}

struct LongColumnStatsData {
1: optional i64 lowValue,
2: optional i64 highValue,
3: required i64 numNulls,
4: required i64 numDVs,
5: optional binary bitVectors,
6: optional binary histogram
}

struct StringColumnStatsData {
1: required i64 maxColLen,
2: required double avgColLen,
3: required i64 numNulls,
4: required i64 numDVs,
5: optional binary bitVectors
}

struct BinaryColumnStatsData {
1: required i64 maxColLen,
2: required double avgColLen,
3: required i64 numNulls,
4: optional binary bitVectors
}

struct Decimal {
3: required i16 scale, // force using scale first in Decimal.compareTo
1: required binary unscaled
}

struct DecimalColumnStatsData {
1: optional Decimal lowValue,
2: optional Decimal highValue,
3: required i64 numNulls,
4: required i64 numDVs,
5: optional binary bitVectors,
6: optional binary histogram
}

struct Date {
1: required i64 daysSinceEpoch
}

struct DateColumnStatsData {
1: optional Date lowValue,
2: optional Date highValue,
3: required i64 numNulls,
4: required i64 numDVs,
5: optional binary bitVectors,
6: optional binary histogram
}

struct Timestamp {
1: required i64 secondsSinceEpoch
}

struct TimestampColumnStatsData {
1: optional Timestamp lowValue,
2: optional Timestamp highValue,
3: required i64 numNulls,
4: required i64 numDVs,
5: optional binary bitVectors,
6: optional binary histogram
}

union ColumnStatisticsData {
1: BooleanColumnStatsData booleanStats,
2: LongColumnStatsData longStats,
3: DoubleColumnStatsData doubleStats,
4: StringColumnStatsData stringStats,
5: BinaryColumnStatsData binaryStats,
6: DecimalColumnStatsData decimalStats,
7: DateColumnStatsData dateStats,
8: TimestampColumnStatsData timestampStats
}

struct ColumnStatisticsObj {
1: required string colName,
2: required string colType,
3: required ColumnStatisticsData statsData
}

struct ColumnStatisticsDesc {
1: required bool isTblLevel,
2: required string dbName,
3: required string tableName,
4: optional string partName,
5: optional i64 lastAnalyzed,
6: optional string catName
}

struct ColumnStatistics {
1: required ColumnStatisticsDesc statsDesc,
2: required list<ColumnStatisticsObj> statsObj,
3: optional bool isStatsCompliant, // 4.x: are the stats isolation-level-compliant with the calling query?
4: optional string engine          // 4.x (master: default "hive")
}

// 4.x: table- or partition-level file metadata (one binary per file).
struct FileMetadata {
  // current supported type mappings are
  // 1 -> IMPALA
  1: byte type = 1
  2: byte version = 1
  3: list<binary> data
}

// 4.x: repetitive objects sent once and referenced by index.
struct ObjectDictionary {
  1: required map<string, list<binary>> values
}

// ---------------------------------------------------------------------------------------------
// Table and Partition
// ---------------------------------------------------------------------------------------------

// table information
//
// VERSIONS:
//  * 2.3 (original): 1-15.
//  * 2.3.10 (HIVE-27868 backport for Spark): `16: optional string catName`. That collides with
//    3.x/4.x `16: optional CreationMetadata creationMetadata` / `17: optional string catName`.
//    The wire types differ (string vs struct), so this IDL (4.x form) skips a 2.3.10 client's
//    field 16 instead of mis-reading it: Table.catName sent by a 2.3.10 client is lost; nothing
//    else is. A 2.3.10 server likewise skips our 16 (struct) and ignores our 17.
//  * 3.0/3.1: 16-18.
//  * 4.x: 19-28 (not in Apache 3.1.x). A branch-3 variant (apache/hive 0046932a...) numbers the fields after colStats
//    differently (23 accessType, 24/25 capabilities, 26 id, 27 fileMetadata, 28 dictionary, no txnId);
//    vendor "3.1.x" builds may follow it, so treat fields > 21 from a 3.x server as best effort.
struct Table {
  1: string tableName,                // name of the table
  2: string dbName,                   // database name ('default')
  3: string owner,                    // owner of this table
  4: i32    createTime,               // creation time of the table
  5: i32    lastAccessTime,           // last access time
  6: i32    retention,                // retention time
  7: StorageDescriptor sd,            // storage descriptor of the table
  8: list<FieldSchema> partitionKeys, // partition keys of the table. only primitive types are supported
  9: map<string, string> parameters,   // to store comments or any other user level parameters
  10: string viewOriginalText,         // original view text, null for non-view
  11: string viewExpandedText,         // expanded view text, null for non-view
  12: string tableType,                // table type enum, e.g. EXTERNAL_TABLE
  13: optional PrincipalPrivilegeSet privileges,
  14: optional bool temporary=false,
  15: optional bool rewriteEnabled,     // rewrite enabled or not
  16: optional CreationMetadata creationMetadata,   // 3.0+: only for MVs
  17: optional string catName,          // 3.0+: name of the catalog the table is in
  18: optional PrincipalType ownerType = PrincipalType.USER, // 3.0+
  19: optional i64 writeId=-1,          // 4.x
  20: optional bool isStatsCompliant,   // 4.x
  21: optional ColumnStatistics colStats, // 4.x: column statistics for table
  22: optional byte accessType,         // 4.x
  23: optional list<string> requiredReadCapabilities,  // 4.x
  24: optional list<string> requiredWriteCapabilities, // 4.x
  25: optional i64 id,                  // 4.x: id of the table (read only)
  26: optional FileMetadata fileMetadata, // 4.x
  27: optional ObjectDictionary dictionary, // 4.x
  28: optional i64 txnId,               // 4.x: txnId associated with the table creation
}

// 4.x (CreationMetadata.sourceTables)
struct SourceTable {
  1: required Table table,
  2: required i64 insertedCount,
  3: required i64 updatedCount,
  4: required i64 deletedCount
}

struct Partition {
  1: list<string> values // string value is converted to appropriate partition key type
  2: string       dbName,
  3: string       tableName,
  4: i32          createTime,
  5: i32          lastAccessTime,
  6: StorageDescriptor   sd,
  7: map<string, string> parameters,
  8: optional PrincipalPrivilegeSet privileges,
  9: optional string catName,             // 3.0+ (also in 2.3.10)
  10: optional i64 writeId=-1,            // 4.x
  11: optional bool isStatsCompliant,     // 4.x
  12: optional ColumnStatistics colStats, // 4.x: column statistics for partition
  13: optional FileMetadata fileMetadata  // 4.x
}

struct PartitionWithoutSD {
  1: list<string> values // string value is converted to appropriate partition key type
  2: i32          createTime,
  3: i32          lastAccessTime,
  4: string       relativePath,
  5: map<string, string> parameters,
  6: optional PrincipalPrivilegeSet privileges
}

struct PartitionSpecWithSharedSD {
  1: list<PartitionWithoutSD> partitions,
  2: StorageDescriptor sd,
}

struct PartitionListComposingSpec {
  1: list<Partition> partitions
}

struct PartitionSpec {
  1: string dbName,
  2: string tableName,
  3: string rootPath,
  4: optional PartitionSpecWithSharedSD sharedSDPartitionSpec,
  5: optional PartitionListComposingSpec partitionList,
  6: optional string catName,           // 3.0+ (also in 2.3.10)
  7: optional i64 writeId=-1,           // 4.x
  8: optional bool isStatsCompliant     // 4.x
}

// ---------------------------------------------------------------------------------------------
// Partition requests
// ---------------------------------------------------------------------------------------------

// Return type for get_partitions_by_expr
struct PartitionsByExprResult {
  1: required list<Partition> partitions,
  // Whether the results has any (currently, all) partitions which may or may not match
  2: required bool hasUnknownPartitions
}

struct PartitionsByExprRequest {
  1: required string dbName,
  2: required string tblName,
  3: required binary expr,
  4: optional string defaultPartitionName,
  5: optional i16 maxParts=-1,
  6: optional string catName,                  // 3.0+
  7: optional string order                     // 4.x
  8: optional string validWriteIdList,         // 4.x
  9: optional i64 id=-1,                       // 4.x: table id
  10: optional bool skipColumnSchemaForPartition, // 4.x master
  11: optional string includeParamKeyPattern,  // 4.x master
  12: optional string excludeParamKeyPattern   // 4.x master
}

// Return type for add_partitions_req
struct AddPartitionsResult {
  1: optional list<Partition> partitions,
  2: optional bool isStatsCompliant,           // 4.x
  3: optional list<FieldSchema> partitionColSchema // 4.x master
}

// Request type for add_partitions_req
struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: optional bool needResult=true,
  6: optional string catName,                  // 3.0+ (also in 2.3.10)
  7: optional string validWriteIdList,         // 4.x
  8: optional bool skipColumnSchemaForPartition, // 4.x master
  9: optional list<FieldSchema> partitionColSchema, // 4.x master
  10: optional EnvironmentContext environmentContext // 4.x master
}

// Return type for drop_partitions_req
struct DropPartitionsResult {
  1: optional list<Partition> partitions,
}

struct DropPartitionsExpr {
  1: required binary expr;
  2: optional i32 partArchiveLevel;
}

union RequestPartsSpec {
  1: list<string> names;
  2: list<DropPartitionsExpr> exprs;
}

// Request type for drop_partitions_req
struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: optional bool deleteData,
  5: optional bool ifExists=true, // currently verified on client
  6: optional bool ignoreProtection,
  7: optional EnvironmentContext environmentContext,
  8: optional bool needResult=true,
  9: optional string catName,                  // 3.0+ (also in 2.3.10)
  10: optional bool skipColumnSchemaForPartition // 4.x master
}

// 4.x master (drop_partition_req)
struct DropPartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional string partName,
  5: optional list<string> partVals,
  6: optional bool deleteData,
  7: optional EnvironmentContext environmentContext
}

struct PartitionValuesRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<FieldSchema> partitionKeys;
  4: optional bool applyDistinct = true;
  5: optional string filter;
  6: optional list<FieldSchema> partitionOrder;
  7: optional bool ascending = true;
  8: optional i64 maxParts = -1;
  9: optional string catName,                  // 3.0+ (also in 2.3.10)
  10: optional string validWriteIdList         // 4.x
}

struct PartitionValuesRow {
  1: required list<string> row;
}

struct PartitionValuesResponse {
  1: required list<PartitionValuesRow> partitionValues;
}

// 4.x (get_partitions_by_names_req)
struct GetPartitionsByNamesRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: optional list<string> names,
  4: optional bool get_col_stats,
  5: optional list<string> processorCapabilities,
  6: optional string processorIdentifier,
  7: optional string engine,                   // master: default "hive"
  8: optional string validWriteIdList,
  9: optional bool getFileMetadata,
  10: optional i64 id=-1,                      // table id
  11: optional bool skipColumnSchemaForPartition, // 4.x master
  12: optional string includeParamKeyPattern,  // 4.x master
  13: optional string excludeParamKeyPattern   // 4.x master
}

struct GetPartitionsByNamesResult {
  1: required list<Partition> partitions
  2: optional ObjectDictionary dictionary
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

struct ResourceUri {
  1: ResourceType resourceType,
  2: string       uri,
}

// User-defined function
struct Function {
  1: string           functionName,
  2: string           dbName,
  3: string           className,
  4: string           ownerName,
  5: PrincipalType    ownerType,
  6: i32              createTime,
  7: FunctionType     functionType,
  8: list<ResourceUri> resourceUris,
  9: optional string  catName                  // 3.0+ (also in 2.3.10)
}

struct GetAllFunctionsResponse {
  1: optional list<Function> functions
}

// ---------------------------------------------------------------------------------------------
// Notifications
// ---------------------------------------------------------------------------------------------

// 3.0+: a transaction and the write id it was given for a table (ALLOC_WRITE_ID messages)
struct TxnToWriteId {
  1: required i64 txnId,
  2: required i64 writeId
}

struct NotificationEventRequest {
    1: required i64 lastEvent,
    2: optional i32 maxEvents,
    3: optional list<string> eventTypeSkipList, // 4.x
    4: optional string catName,                 // 4.0.1+
    5: optional string dbName,                  // 4.0.1+
    6: optional list<string> tableNames         // 4.0.1+ (ids 1-6 checked against 4.0.1's jar)
}

struct NotificationEvent {
    1: required i64 eventId,
    2: required i32 eventTime,
    3: required string eventType,
    4: optional string dbName,
    5: optional string tableName,
    6: required string message,
    7: optional string messageFormat,
    8: optional string catName                  // 3.0+
}

struct NotificationEventResponse {
    1: required list<NotificationEvent> events,
}

struct CurrentNotificationEventId {
    1: required i64 eventId,
}

// 3.0+ (get_notification_events_count)
struct NotificationEventsCountRequest {
    1: required i64 fromEventId,
    2: required string dbName,
    3: optional string catName,
    4: optional i64 toEventId,                  // 4.x
    5: optional i64 limit,                      // 4.x
    6: optional list<string> tableNames         // 4.0.1+ (ids 1-6 checked against 4.0.1's jar)
}

struct NotificationEventsCountResponse {
    1: required i64 eventsCount,
}

// VERSIONS (a real incompatibility inside Apache Hive): 2.3 has
//   1: required list<string> filesAdded, 2: optional list<string> filesAddedChecksum
// while 3.0+ has the layout below. Hive 3/4 servers therefore mis-read a 2.x client's insert data
// (its filesAddedChecksum lands in filesAdded; its filesAdded is skipped), and so does this IDL.
// Only fire_listener_event carries this struct; treat insert data from 2.x clients as best effort.
struct InsertEventRequestData {
    1: optional bool replace,
    2: required list<string> filesAdded,
    // Checksum of files (hex string of checksum byte payload)
    3: optional list<string> filesAddedChecksum,
    // Used by acid operation to create the sub directory (4.x)
    4: optional list<string> subDirectoryList,
    // partition value which was inserted (used in case of bulk insert events) (4.x)
    5: optional list<string> partitionVal
}

// VERSIONS: 2 insertDatas is 4.x; 3 refreshEvent is 4.x master (master also marks the members
// `optional`, which changes nothing for a union).
union FireEventRequestData {
    1: InsertEventRequestData insertData,
    // used to fire insert events on multiple partitions
    2: list<InsertEventRequestData> insertDatas,
    // Identify if it is a refresh or invalidate event
    3: bool refreshEvent
}

struct FireEventRequest {
    1: required bool successful,
    2: required FireEventRequestData data
    3: optional string dbName,
    4: optional string tableName,
    // ignored if event request data contains multiple insert event datas
    5: optional list<string> partitionVals,
    6: optional string catName,                 // 3.0+
    7: optional map<string, string> tblParams,  // 4.x master
}

// VERSIONS: empty in 2.3 and 3.0; eventIds is 4.x.
struct FireEventResponse {
    1: list<i64> eventIds
}

// ---------------------------------------------------------------------------------------------
// Table requests
// ---------------------------------------------------------------------------------------------

struct ClientCapabilities {
  1: required list<ClientCapability> values
}

// 4.x (GetTablesRequest.projectionSpec)
struct GetProjectionsSpec {
   1: list<string> fieldList;
   2: string includeParamKeyPattern;
   3: string excludeParamKeyPattern;
}

// Field 5 is unused in every Hive version.
struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional ClientCapabilities capabilities,
  4: optional string catName,                  // 3.0+
  6: optional string validWriteIdList,         // 4.x
  7: optional bool getColumnStats,             // 4.x
  8: optional list<string> processorCapabilities, // 4.x
  9: optional string processorIdentifier,      // 4.x
  10: optional string engine,                  // 4.x (master: default "hive")
  11: optional i64 id=-1                       // 4.x: table id
}

struct GetTableResult {
  1: required Table table,
  2: optional bool isStatsCompliant            // 4.x
}

struct GetTablesRequest {
  1: required string dbName,
  2: optional list<string> tblNames,
  3: optional ClientCapabilities capabilities,
  4: optional string catName,                  // 3.0+
  5: optional list<string> processorCapabilities, // 4.x
  6: optional string processorIdentifier,      // 4.x
  7: optional GetProjectionsSpec projectionSpec, // 4.x
  8: optional string tablesPattern             // 4.x
}

struct GetTablesResult {
  1: required list<Table> tables
}

// 4.x master (drop_table_req)
struct DropTableRequest {
 1: optional string catalogName,
 2: required string dbName,
 3: required string tableName,
 4: optional bool deleteData,
 5: optional EnvironmentContext envContext,
 6: optional bool dropPartitions
}

// 4.x (get_database_req)
struct GetDatabaseRequest {
 1: optional string name,
 2: optional string catalogName,
 3: optional list<string> processorCapabilities,
 4: optional string processorIdentifier
}

// 4.x master (alter_database_req)
struct AlterDatabaseRequest {
 1: required string oldDbName,
 2: required Database newDb
}

// 4.x (drop_database_req)
struct DropDatabaseRequest {
  1: required string name,
  2: optional string catalogName,
  3: required bool ignoreUnknownDb,
  4: required bool deleteData,
  5: required bool cascade,
  6: optional bool softDelete=false,
  7: optional i64 txnId=0,
  8: optional bool deleteManagedDir=true
}

// 4.x (create_table_req)
struct CreateTableRequest {
   1: required Table table,
   2: optional EnvironmentContext envContext,
   3: optional list<SQLPrimaryKey> primaryKeys,
   4: optional list<SQLForeignKey> foreignKeys,
   5: optional list<SQLUniqueConstraint> uniqueConstraints,
   6: optional list<SQLNotNullConstraint> notNullConstraints,
   7: optional list<SQLDefaultConstraint> defaultConstraints,
   8: optional list<SQLCheckConstraint> checkConstraints,
   9: optional list<string> processorCapabilities,
   10: optional string processorIdentifier
}

// 4.x master (create_database_req).
// VERSIONS: the 4.0.x file declares this struct (unused: no create_database_req there) with
// `11: optional string type` and no 13; master, which has the method, uses the form below.
struct CreateDatabaseRequest {
  1: required string databaseName,
  2: optional string description,
  3: optional string locationUri,
  4: optional map<string, string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
  9: optional i32 createTime,
  10: optional string managedLocationUri,
  11: optional DatabaseType type,
  12: optional string dataConnectorName,
  13: optional string remote_dbname
}

// 4.x (alter_partitions_req; not in 3.1.x)
struct AlterPartitionsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<Partition> partitions,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId=-1,
  7: optional string validWriteIdList,
  8: optional bool skipColumnSchemaForPartition, // 4.x master
  9: optional list<FieldSchema> partitionColSchema // 4.x master
}

struct AlterPartitionsResponse {
}

// 4.x master (append_partition_req)
struct AppendPartitionsRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional string name,
  5: optional list<string> partVals,
  6: optional EnvironmentContext environmentContext
}

// 4.x (rename_partition_req)
struct RenamePartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<string> partVals,
  5: required Partition newPart,
  6: optional string validWriteIdList,
  7: optional i64 txnId,              // txnId associated with the rename operation
  8: optional bool clonePart          // non-blocking rename
}

struct RenamePartitionResponse {
}

// 4.x (alter_table_req; not in 3.1.x: HMS 3.1.2 answers "Invalid method name")
struct AlterTableRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required Table table,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId=-1,
  7: optional string validWriteIdList
  8: optional list<string> processorCapabilities,
  9: optional string processorIdentifier,
  10: optional string expectedParameterKey,    // 4.x: server-side compare-and-set on a table parameter
  11: optional string expectedParameterValue
}

struct AlterTableResponse {
}

// ---------------------------------------------------------------------------------------------
// Exceptions (every one is `1: string message` in every version)
// ---------------------------------------------------------------------------------------------

exception MetaException {
  1: string message
}

exception UnknownTableException {
  1: string message
}

exception UnknownDBException {
  1: string message
}

exception AlreadyExistsException {
  1: string message
}

exception InvalidPartitionException {
  1: string message
}

exception UnknownPartitionException {
  1: string message
}

exception InvalidObjectException {
  1: string message
}

exception NoSuchObjectException {
  1: string message
}

exception InvalidOperationException {
  1: string message
}

exception ConfigValSecurityException {
  1: string message
}

exception InvalidInputException {
  1: string message
}

// Transaction and lock exceptions
exception NoSuchTxnException {
    1: string message
}

exception TxnAbortedException {
    1: string message
}

exception TxnOpenException {
    1: string message
}

exception NoSuchLockException {
    1: string message
}

// 4.x
exception CompactionAbortedException {
    1: string message
}

// 4.x
exception NoSuchCompactionException {
    1: string message
}

// ---------------------------------------------------------------------------------------------
// The service. Signatures are Hive's (4.x master unless noted). A method that a server does not
// have fails with TApplicationException UNKNOWN_METHOD ("Invalid method name") and the connection
// stays usable.
// ---------------------------------------------------------------------------------------------

service ThriftHiveMetastore extends fb303.FacebookService
{
  string getMetaConf(1:string key) throws(1:MetaException o1)
  void setMetaConf(1:string key, 2:string value) throws(1:MetaException o1)

  // 3.0+
  GetCatalogsResponse get_catalogs() throws (1:MetaException o1)

  // -- databases --
  void create_database(1:Database database) throws(1:AlreadyExistsException o1, 2:InvalidObjectException o2, 3:MetaException o3)
  // 4.x master
  void create_database_req(1:CreateDatabaseRequest createDatabaseRequest) throws(1:AlreadyExistsException o1, 2:InvalidObjectException o2, 3:MetaException o3)
  Database get_database(1:string name) throws(1:NoSuchObjectException o1, 2:MetaException o2)
  // 4.x
  Database get_database_req(1:GetDatabaseRequest request) throws(1:NoSuchObjectException o1, 2:MetaException o2)
  void drop_database(1:string name, 2:bool deleteData, 3:bool cascade) throws(1:NoSuchObjectException o1, 2:InvalidOperationException o2, 3:MetaException o3)
  // 4.x
  void drop_database_req(1:DropDatabaseRequest req) throws(1:NoSuchObjectException o1, 2:InvalidOperationException o2, 3:MetaException o3)
  list<string> get_databases(1:string pattern) throws(1:MetaException o1)
  list<string> get_all_databases() throws(1:MetaException o1)
  void alter_database(1:string dbname, 2:Database db) throws(1:MetaException o1, 2:NoSuchObjectException o2)
  // 4.x master
  void alter_database_req(1:AlterDatabaseRequest alterDbReq) throws(1:MetaException o1, 2:NoSuchObjectException o2)

  // -- tables --
  list<FieldSchema> get_fields(1:string db_name, 2:string table_name) throws(1:MetaException o1, 2:UnknownTableException o2, 3:UnknownDBException o3)
  list<FieldSchema> get_schema(1:string db_name, 2:string table_name) throws(1:MetaException o1, 2:UnknownTableException o2, 3:UnknownDBException o3)

  void create_table(1:Table tbl) throws(1:AlreadyExistsException o1, 2:InvalidObjectException o2, 3:MetaException o3, 4:NoSuchObjectException o4)
  void create_table_with_environment_context(1:Table tbl,
      2:EnvironmentContext environment_context)
      throws (1:AlreadyExistsException o1,
              2:InvalidObjectException o2, 3:MetaException o3,
              4:NoSuchObjectException o4)
  // VERSIONS: 2.3 has args 1-3 only (no unique/not-null/default/check constraints).
  void create_table_with_constraints(1:Table tbl, 2: list<SQLPrimaryKey> primaryKeys, 3: list<SQLForeignKey> foreignKeys,
      4: list<SQLUniqueConstraint> uniqueConstraints, 5: list<SQLNotNullConstraint> notNullConstraints,
      6: list<SQLDefaultConstraint> defaultConstraints, 7: list<SQLCheckConstraint> checkConstraints)
      throws (1:AlreadyExistsException o1,
              2:InvalidObjectException o2, 3:MetaException o3,
              4:NoSuchObjectException o4)
  // 4.x
  void create_table_req(1:CreateTableRequest request) throws (1:AlreadyExistsException o1,
        2:InvalidObjectException o2, 3:MetaException o3,
        4:NoSuchObjectException o4)
  // drops the table and all the partitions associated with it if the table has partitions
  // (the exception names o1/o3 with ids 1/2 are Hive's)
  void drop_table(1:string dbname, 2:string name, 3:bool deleteData)
                       throws(1:NoSuchObjectException o1, 2:MetaException o3)
  void drop_table_with_environment_context(1:string dbname, 2:string name, 3:bool deleteData,
      4:EnvironmentContext environment_context)
                       throws(1:NoSuchObjectException o1, 2:MetaException o3)
  // 4.x master
  void drop_table_req(1:DropTableRequest dropTableReq)
        throws(1:NoSuchObjectException o1, 2:MetaException o3)
  // 3.0+
  void truncate_table(1:string dbName, 2:string tableName, 3:list<string> partNames)
                          throws(1:MetaException o1)
  // 4.x
  TruncateTableResponse truncate_table_req(1:TruncateTableRequest req) throws(1:MetaException o1)
  list<string> get_tables(1: string db_name, 2: string pattern) throws (1: MetaException o1)
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1)

  // REMOVED in Hive 4.0.1+/master (HIVE-26537): kept because 2.3/3.x/4.0.0 clients call it.
  Table get_table(1:string dbname, 2:string tbl_name)
                       throws (1:MetaException o1, 2:NoSuchObjectException o2)
  // REMOVED in Hive 4.0.1+/master (HIVE-26537).
  // VERSIONS: 3.x/4.0 declare no exceptions here; 2.3.10 declares the three below. They are kept
  // (2.3 form) because 3.x/4.x servers never send them, while dropping them would turn a 2.3
  // server's MetaException into a "missing result" error.
  list<Table> get_table_objects_by_name(1:string dbname, 2:list<string> tbl_names)
                                   throws (1:MetaException o1, 2:InvalidOperationException o2, 3:UnknownDBException o3)
  // 2.3+: the portable way to read a table.
  GetTableResult get_table_req(1:GetTableRequest req) throws (1:MetaException o1, 2:NoSuchObjectException o2)
  GetTablesResult get_table_objects_by_name_req(1:GetTablesRequest req)
                                   throws (1:MetaException o1, 2:InvalidOperationException o2, 3:UnknownDBException o3)

  void alter_table(1:string dbname, 2:string tbl_name, 3:Table new_tbl)
                       throws (1:InvalidOperationException o1, 2:MetaException o2)
  void alter_table_with_environment_context(1:string dbname, 2:string tbl_name,
      3:Table new_tbl, 4:EnvironmentContext environment_context)
      throws (1:InvalidOperationException o1, 2:MetaException o2)
  // alter table not only applies to future partitions but also cascade to existing partitions
  void alter_table_with_cascade(1:string dbname, 2:string tbl_name, 3:Table new_tbl, 4:bool cascade)
                       throws (1:InvalidOperationException o1, 2:MetaException o2)
  // 4.x (not in 2.3 or 3.1.x)
  AlterTableResponse alter_table_req(1:AlterTableRequest req)
      throws (1:InvalidOperationException o1, 2:MetaException o2)

  // -- partitions --
  Partition add_partition(1:Partition new_part)
                       throws(1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  Partition add_partition_with_environment_context(1:Partition new_part,
      2:EnvironmentContext environment_context)
      throws (1:InvalidObjectException o1, 2:AlreadyExistsException o2,
      3:MetaException o3)
  i32 add_partitions(1:list<Partition> new_parts)
                       throws(1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  i32 add_partitions_pspec(1:list<PartitionSpec> new_parts)
                       throws(1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  Partition append_partition(1:string db_name, 2:string tbl_name, 3:list<string> part_vals)
                       throws (1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  AddPartitionsResult add_partitions_req(1:AddPartitionsRequest request)
                       throws(1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  Partition append_partition_with_environment_context(1:string db_name, 2:string tbl_name,
      3:list<string> part_vals, 4:EnvironmentContext environment_context)
                       throws (1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  // 4.x master
  Partition append_partition_req(1:AppendPartitionsRequest appendPartitionsReq)
                       throws (1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  Partition append_partition_by_name(1:string db_name, 2:string tbl_name, 3:string part_name)
                       throws (1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  Partition append_partition_by_name_with_environment_context(1:string db_name, 2:string tbl_name,
      3:string part_name, 4:EnvironmentContext environment_context)
                       throws (1:InvalidObjectException o1, 2:AlreadyExistsException o2, 3:MetaException o3)
  bool drop_partition(1:string db_name, 2:string tbl_name, 3:list<string> part_vals, 4:bool deleteData)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  bool drop_partition_with_environment_context(1:string db_name, 2:string tbl_name,
      3:list<string> part_vals, 4:bool deleteData, 5:EnvironmentContext environment_context)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  // 4.x master
  bool drop_partition_req(1:DropPartitionRequest dropPartitionReq)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  bool drop_partition_by_name(1:string db_name, 2:string tbl_name, 3:string part_name, 4:bool deleteData)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  bool drop_partition_by_name_with_environment_context(1:string db_name, 2:string tbl_name,
      3:string part_name, 4:bool deleteData, 5:EnvironmentContext environment_context)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)

  Partition get_partition(1:string db_name, 2:string tbl_name, 3:list<string> part_vals)
                       throws(1:MetaException o1, 2:NoSuchObjectException o2)
  Partition exchange_partition(1:map<string, string> partitionSpecs, 2:string source_db,
      3:string source_table_name, 4:string dest_db, 5:string dest_table_name)
      throws(1:MetaException o1, 2:NoSuchObjectException o2, 3:InvalidObjectException o3,
      4:InvalidInputException o4)
  list<Partition> exchange_partitions(1:map<string, string> partitionSpecs, 2:string source_db,
      3:string source_table_name, 4:string dest_db, 5:string dest_table_name)
      throws(1:MetaException o1, 2:NoSuchObjectException o2, 3:InvalidObjectException o3,
      4:InvalidInputException o4)
  Partition get_partition_by_name(1:string db_name 2:string tbl_name, 3:string part_name)
                       throws(1:MetaException o1, 2:NoSuchObjectException o2)

  // max_parts is i16 in every Hive version: -1 means all, 32767 is the largest explicit cap.
  list<Partition> get_partitions(1:string db_name, 2:string tbl_name, 3:i16 max_parts=-1)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  // VERSIONS: 2.3 declares throws(1:MetaException o2); 3.0+ is the form below. Same wire type
  // (struct) at id 1, so a 2.3 server's MetaException decodes as NoSuchObjectException (message kept).
  list<string> get_partition_names(1:string db_name, 2:string tbl_name, 3:i16 max_parts=-1)
                       throws(1:NoSuchObjectException o1, 2:MetaException o2)
  // 2.3+
  PartitionValuesResponse get_partition_values(1:PartitionValuesRequest request)
    throws(1:MetaException o1, 2:NoSuchObjectException o2);
  list<Partition> get_partitions_ps(1:string db_name 2:string tbl_name
    3:list<string> part_vals, 4:i16 max_parts=-1)
                       throws(1:MetaException o1, 2:NoSuchObjectException o2)
  list<string> get_partition_names_ps(1:string db_name,
    2:string tbl_name, 3:list<string> part_vals, 4:i16 max_parts=-1)
                       throws(1:MetaException o1, 2:NoSuchObjectException o2)
  list<Partition> get_partitions_by_filter(1:string db_name 2:string tbl_name
    3:string filter, 4:i16 max_parts=-1)
                       throws(1:MetaException o1, 2:NoSuchObjectException o2)
  PartitionsByExprResult get_partitions_by_expr(1:PartitionsByExprRequest req)
                       throws(1:MetaException o1, 2:NoSuchObjectException o2)
  // VERSIONS: o3 (InvalidObjectException) is 4.x master; older servers never send it.
  list<Partition> get_partitions_by_names(1:string db_name 2:string tbl_name 3:list<string> names)
      throws(1:MetaException o1, 2:NoSuchObjectException o2, 3:InvalidObjectException o3)
  // 4.x (o3 is master)
  GetPartitionsByNamesResult get_partitions_by_names_req(1:GetPartitionsByNamesRequest req)
      throws(1:MetaException o1, 2:NoSuchObjectException o2, 3:InvalidObjectException o3)

  void alter_partition(1:string db_name, 2:string tbl_name, 3:Partition new_part)
                       throws (1:InvalidOperationException o1, 2:MetaException o2)
  void alter_partitions(1:string db_name, 2:string tbl_name, 3:list<Partition> new_parts)
                       throws (1:InvalidOperationException o1, 2:MetaException o2)
  void alter_partitions_with_environment_context(1:string db_name, 2:string tbl_name,
      3:list<Partition> new_parts, 4:EnvironmentContext environment_context)
      throws (1:InvalidOperationException o1, 2:MetaException o2)
  // 4.x (not in 2.3 or 3.1.x)
  AlterPartitionsResponse alter_partitions_req(1:AlterPartitionsRequest req)
      throws (1:InvalidOperationException o1, 2:MetaException o2)
  void alter_partition_with_environment_context(1:string db_name,
      2:string tbl_name, 3:Partition new_part,
      4:EnvironmentContext environment_context)
      throws (1:InvalidOperationException o1, 2:MetaException o2)
  void rename_partition(1:string db_name, 2:string tbl_name, 3:list<string> part_vals, 4:Partition new_part)
                       throws (1:InvalidOperationException o1, 2:MetaException o2)
  // 4.x
  RenamePartitionResponse rename_partition_req(1:RenamePartitionRequest req)
                       throws (1:InvalidOperationException o1, 2:MetaException o2)

  // -- config / session --
  string get_config_value(1:string name, 2:string defaultValue)
                          throws(1:ConfigValSecurityException o1)
  list<string> set_ugi(1:string user_name, 2:list<string> group_names) throws (1:MetaException o1)
  // 3.0+
  string get_metastore_db_uuid() throws (1:MetaException o1)

  // -- functions --
  void create_function(1:Function func)
      throws (1:AlreadyExistsException o1,
              2:InvalidObjectException o2,
              3:MetaException o3,
              4:NoSuchObjectException o4)
  void drop_function(1:string dbName, 2:string funcName)
      throws (1:NoSuchObjectException o1, 2:MetaException o3)
  void alter_function(1:string dbName, 2:string funcName, 3:Function newFunc)
      throws (1:InvalidOperationException o1, 2:MetaException o2)
  list<string> get_functions(1:string dbName, 2:string pattern)
      throws (1:MetaException o1)
  Function get_function(1:string dbName, 2:string funcName)
      throws (1:MetaException o1, 2:NoSuchObjectException o2)
  GetAllFunctionsResponse get_all_functions() throws (1:MetaException o1)

  // -- notification log --
  NotificationEventResponse get_next_notification(1:NotificationEventRequest rqst)
  CurrentNotificationEventId get_current_notificationEventId()
  // 3.0+
  NotificationEventsCountResponse get_notification_events_count(1:NotificationEventsCountRequest rqst)
  FireEventResponse fire_listener_event(1:FireEventRequest rqst)
  void flushCache()
}

// Parameter keys of interest (Hive's constants).
const string IS_ARCHIVED = "is_archived",
const string ORIGINAL_LOCATION = "original_location",
const string IS_IMMUTABLE = "immutable",
const string META_TABLE_STORAGE   = "storage_handler",
const string TABLE_IS_TRANSACTIONAL = "transactional",
const string TABLE_TRANSACTIONAL_PROPERTIES = "transactional_properties",
const string EXPECTED_PARAMETER_KEY = "expected_parameter_key",
const string EXPECTED_PARAMETER_VALUE = "expected_parameter_value",
