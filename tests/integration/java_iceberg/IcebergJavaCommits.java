import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.hive.HiveCatalog;
import org.apache.iceberg.types.Types;

/**
 * Commits to an Iceberg table with Iceberg's own Java library (its HiveCatalog, from the Iceberg Spark runtime
 * jar, on pyspark's Hive 2.3 and Hadoop jars), one command a line from stdin, printing {@code ok} or
 * {@code error: ...} after each. Run as a single source file: {@code java -cp JARS IcebergJavaCommits.java URI
 * WAREHOUSE DB}. Commands: {@code create}, {@code append N} (a data file of N records), {@code overwrite}
 * (replaces the first file with one of 7 records), {@code delete} (removes the newest file), {@code schema},
 * {@code spec}, {@code branch}, {@code expire} (the oldest snapshot), {@code drop}. Data files are recorded in
 * the metadata only (Iceberg commits do not read them), and expiry deletes no file.
 */
public class IcebergJavaCommits {
  public static void main(String[] args) throws Exception {
    HiveCatalog catalog = new HiveCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize("java", Map.of("uri", args[0], "warehouse", args[1]));
    String db = args[2];
    TableIdentifier id = TableIdentifier.of(db, "orders");
    List<DataFile> files = new ArrayList<>();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("ready");
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      String[] command = line.trim().split(" ");
      try {
        switch (command[0]) {
          case "create": {
            catalog.createNamespace(Namespace.of(db));
            Schema schema =
                new Schema(
                    Types.NestedField.optional(1, "id", Types.LongType.get()),
                    Types.NestedField.optional(2, "region", Types.StringType.get()));
            catalog.createTable(id, schema, PartitionSpec.unpartitioned());
            break;
          }
          case "append": {
            Table table = catalog.loadTable(id);
            DataFile file = file(table, files.size(), Long.parseLong(command[1]));
            table.newAppend().appendFile(file).commit();
            files.add(file);
            break;
          }
          case "overwrite": {
            Table table = catalog.loadTable(id);
            DataFile file = file(table, files.size(), 7);
            table.newOverwrite().deleteFile(files.get(0)).addFile(file).commit();
            files.set(0, file);
            break;
          }
          case "delete": {
            Table table = catalog.loadTable(id);
            table.newDelete().deleteFile(files.remove(files.size() - 1)).commit();
            break;
          }
          case "schema":
            catalog.loadTable(id).updateSchema().addColumn("note", Types.StringType.get()).renameColumn("region", "area").commit();
            break;
          case "spec":
            catalog.loadTable(id).updateSpec().addField("area").commit();
            break;
          case "branch": {
            Table table = catalog.loadTable(id);
            table.manageSnapshots().createBranch("audit", table.currentSnapshot().snapshotId()).commit();
            break;
          }
          case "expire": {
            Table table = catalog.loadTable(id);
            long oldest = table.history().get(0).snapshotId();
            table.expireSnapshots().expireSnapshotId(oldest).deleteWith(path -> {}).commit();
            break;
          }
          case "drop":
            catalog.dropTable(id, false);
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
  }

  private static DataFile file(Table table, int n, long records) {
    return DataFiles.builder(table.spec())
        .withPath(table.location() + "/data/java-" + n + "-" + records + ".parquet")
        .withFileSizeInBytes(100 * records)
        .withRecordCount(records)
        .withFormat(FileFormat.PARQUET)
        .build();
  }
}
