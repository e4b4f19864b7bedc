import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Commits to an Iceberg table with Spark SQL and Iceberg's Spark runtime (Spark in this JVM, local[1]; the
 * catalog {@code lake} is Iceberg's SparkCatalog of type hive on the metastore at URI), one command a line from
 * stdin, printing {@code ok} or {@code error: ...} after each. Run as a single source file: {@code java -cp JARS
 * IcebergSparkCommits.java URI WAREHOUSE DB} (with the JVM options Spark needs). Commands: {@code create} (a
 * table partitioned by region), {@code append FROM TO} (ids FROM..TO-1, even ones in eu, odd in us), {@code
 * overwrite} (INSERT OVERWRITE of the eu partition, dynamic), {@code delete} (DELETE FROM the us partition),
 * {@code schema} (ADD COLUMN), {@code spec} (ADD PARTITION FIELD), {@code branch} (CREATE BRANCH audit), {@code
 * expire} (CALL system.expire_snapshots of the oldest snapshot), {@code drop}.
 */
public class IcebergSparkCommits {
  public static void main(String[] args) throws Exception {
    String db = args[2];
    String table = "lake." + db + ".orders";
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("hivewire-iceberg-spark")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.lake.type", "hive")
            .config("spark.sql.catalog.lake.uri", args[0])
            .config("spark.sql.catalog.lake.warehouse", args[1])
            .getOrCreate();
    spark.sparkContext().setLogLevel("WARN");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("ready");
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      String[] command = line.trim().split(" ");
      try {
        switch (command[0]) {
          case "create":
            spark.sql("CREATE NAMESPACE IF NOT EXISTS lake." + db);
            spark.sql(
                "CREATE TABLE " + table + " (id bigint, region string, amount double) USING iceberg"
                    + " PARTITIONED BY (region)");
            break;
          case "append":
            spark.sql(
                "INSERT INTO " + table + " SELECT id, CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us' END,"
                    + " CAST(id AS DOUBLE) FROM range(" + command[1] + ", " + command[2] + ")");
            break;
          case "overwrite":
            spark.sql("INSERT OVERWRITE " + table + " SELECT id, 'eu', CAST(id AS DOUBLE) FROM range(100, 103)");
            break;
          case "delete":
            spark.sql("DELETE FROM " + table + " WHERE region = 'us'");
            break;
          case "schema":
            spark.sql("ALTER TABLE " + table + " ADD COLUMN note string");
            break;
          case "spec":
            spark.sql("ALTER TABLE " + table + " ADD PARTITION FIELD bucket(4, id)");
            break;
          case "branch":
            spark.sql("ALTER TABLE " + table + " CREATE BRANCH audit");
            break;
          case "expire": {
            Row oldest =
                spark.sql("SELECT snapshot_id FROM " + table + ".snapshots ORDER BY committed_at LIMIT 1").first();
            spark.sql(
                "CALL lake.system.expire_snapshots(table => '" + db + ".orders', snapshot_ids => array("
                    + oldest.getLong(0) + "L))");
            break;
          }
          case "drop":
            spark.sql("DROP TABLE " + table);
            break;
          default:
            throw new IllegalArgumentException("unknown command " + command[0]);
        }
        System.out.println("ok");
      } catch (Exception e) {
        Throwable root = e;
        while (root.getCause() != null) {
          root = root.getCause();
        }
        System.out.println("error: " + root.toString().replace('\n', ' '));
      }
      System.out.flush();
    }
    spark.stop();
  }
}
