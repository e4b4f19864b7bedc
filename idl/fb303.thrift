/**
 * fb303.thrift -- the Facebook base service that Hive's ThriftHiveMetastore extends.
 *
 * Same enum values, method names and argument ids as apache/thrift
 * contrib/fb303/if/fb303.thrift (which Hive includes as share/fb303/if/fb303.thrift).
 * Only the namespaces differ: the Python code is generated into hivewire_thrift.fb303
 * so that no top-level "fb303" package is ever installed.
 *
 * Regenerate the Python code with: python idl/generate.py
 */

namespace java com.facebook.fb303
namespace cpp facebook.fb303
namespace py hivewire_thrift.fb303

/**
 * Common status reporting mechanism across all services
 */
enum fb_status {
  DEAD = 0,
  STARTING = 1,
  ALIVE = 2,
  STOPPING = 3,
  STOPPED = 4,
  WARNING = 5,
}

/**
 * Standard base service
 */
service FacebookService {

  /** Returns a descriptive name of the service */
  string getName(),

  /** Returns the version of the service */
  string getVersion(),

  /** Gets the status of this service (the HMS answers ALIVE) */
  fb_status getStatus(),

  /** User friendly description of status */
  string getStatusDetails(),

  /** Gets the counters for this service */
  map<string, i64> getCounters(),

  /** Gets the value of a single counter */
  i64 getCounter(1: string key),

  /** Sets an option */
  void setOption(1: string key, 2: string value),

  /** Gets an option */
  string getOption(1: string key),

  /** Gets all options */
  map<string, string> getOptions(),

  /** Returns a CPU profile over the given time interval */
  string getCpuProfile(1: i32 profileDurationInSec),

  /** Returns the unix time that the server has been running since */
  i64 aliveSince(),

  /** Tell the server to reload its configuration, reopen log files, etc */
  oneway void reinitialize(),

  /** Suggest a shutdown to the server (the HMS only releases its RawStore; it keeps serving) */
  oneway void shutdown(),
}
