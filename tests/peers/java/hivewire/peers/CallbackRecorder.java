package hivewire.peers;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.ConfigChangeEvent;
import org.apache.hadoop.hive.metastore.events.CreateDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.CreateFunctionEvent;
import org.apache.hadoop.hive.metastore.events.CreateTableEvent;
import org.apache.hadoop.hive.metastore.events.DropDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.DropFunctionEvent;
import org.apache.hadoop.hive.metastore.events.DropPartitionEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;
import org.apache.hadoop.hive.metastore.events.InsertEvent;
import org.apache.hadoop.hive.metastore.events.ListenerEvent;
import org.apache.hadoop.hive.metastore.events.LoadPartitionDoneEvent;

/**
 * A Drone Fly listener of the tests' own: every callback it receives, one JSON line each.
 *
 * <p>One source for Drone Fly 1.0.8 (Hive 2.3.9's listener API) and 1.0.9 (Hive 4.0.1's): what differs between
 * them (InsertEvent's accessors, the alters' isTruncateOp) is read by reflection, and only callbacks both
 * releases declare are overridden. Each line holds: callback, eventClass, status, parameters, db, tableName, the
 * event's objects summarised (table: db, name, tableType, location, parameters, partitionKeys; partition: db,
 * table, values, location, parameters), the old and new objects of alters, deleteData, isTruncateOp (null where
 * the release has none), and INSERT's partitionValues, files and fileChecksums.
 *
 * <p>System properties: hivewire.peers.recording (the file lines are appended to; none: nothing is written),
 * hivewire.peers.sleep.ms (milliseconds to wait in every callback, after recording; default 0).
 */
public class CallbackRecorder extends MetaStoreEventListener {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final OutputStream out;
  private final long sleepMs;

  public CallbackRecorder(Configuration conf) throws IOException {
    super(conf);
    String path = System.getProperty("hivewire.peers.recording");
    out = path == null || path.isEmpty() ? null : new FileOutputStream(path, true);
    sleepMs = Long.parseLong(System.getProperty("hivewire.peers.sleep.ms", "0"));
  }

  private static Map<String, Object> table(Table t) {
    if (t == null) {
      return null;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("db", t.getDbName());
    m.put("name", t.getTableName());
    m.put("tableType", t.getTableType());
    m.put("location", t.getSd() == null ? null : t.getSd().getLocation());
    m.put("parameters", t.getParameters());
    List<String> keys = new ArrayList<>();
    if (t.getPartitionKeys() != null) {
      t.getPartitionKeys().forEach(k -> keys.add(k.getName()));
    }
    m.put("partitionKeys", keys);
    return m;
  }

  private static Map<String, Object> partition(Partition p) {
    if (p == null) {
      return null;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("db", p.getDbName());
    m.put("table", p.getTableName());
    m.put("values", p.getValues());
    m.put("location", p.getSd() == null ? null : p.getSd().getLocation());
    m.put("parameters", p.getParameters());
    return m;
  }

  private static List<Map<String, Object>> partitions(Iterator<Partition> it) {
    List<Map<String, Object>> out = new ArrayList<>();
    while (it != null && it.hasNext()) {
      out.add(partition(it.next()));
    }
    return out;
  }

  /** A no-argument accessor the release may not have: its value, or null. */
  private static Object call(Object target, String name) {
    try {
      Method method = target.getClass().getMethod(name);
      return method.invoke(target);
    } catch (NoSuchMethodException e) {
      return null;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("CallbackRecorder: " + name + ": " + e, e);
    }
  }

  private static Map<String, Object> start(String callback, ListenerEvent event) {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("callback", callback);
    line.put("eventClass", event.getClass().getName());
    line.put("status", event.getStatus());
    line.put("parameters", event.getParameters());
    return line;
  }

  private static void names(Map<String, Object> line, Table t) {
    line.put("db", t == null ? null : t.getDbName());
    line.put("tableName", t == null ? null : t.getTableName());
  }

  private synchronized void write(Map<String, Object> line) throws MetaException {
    try {
      if (out != null) {
        out.write(JSON.writeValueAsString(line).getBytes(StandardCharsets.UTF_8));
        out.write('\n');
        out.flush();
      }
      if (sleepMs > 0) {
        Thread.sleep(sleepMs);
      }
    } catch (IOException e) {
      throw new MetaException("CallbackRecorder: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void onCreateTable(CreateTableEvent e) throws MetaException {
    Map<String, Object> line = start("onCreateTable", e);
    names(line, e.getTable());
    line.put("table", table(e.getTable()));
    write(line);
  }

  @Override
  public void onDropTable(DropTableEvent e) throws MetaException {
    Map<String, Object> line = start("onDropTable", e);
    names(line, e.getTable());
    line.put("table", table(e.getTable()));
    line.put("deleteData", e.getDeleteData());
    write(line);
  }

  @Override
  public void onAlterTable(AlterTableEvent e) throws MetaException {
    Map<String, Object> line = start("onAlterTable", e);
    names(line, e.getNewTable());
    line.put("oldTable", table(e.getOldTable()));
    line.put("newTable", table(e.getNewTable()));
    line.put("isTruncateOp", call(e, "getIsTruncateOp"));
    write(line);
  }

  @Override
  public void onAddPartition(AddPartitionEvent e) throws MetaException {
    Map<String, Object> line = start("onAddPartition", e);
    names(line, e.getTable());
    line.put("table", table(e.getTable()));
    line.put("partitions", partitions(e.getPartitionIterator()));
    write(line);
  }

  @Override
  public void onDropPartition(DropPartitionEvent e) throws MetaException {
    Map<String, Object> line = start("onDropPartition", e);
    names(line, e.getTable());
    line.put("table", table(e.getTable()));
    line.put("partitions", partitions(e.getPartitionIterator()));
    line.put("deleteData", e.getDeleteData());
    write(line);
  }

  @Override
  public void onAlterPartition(AlterPartitionEvent e) throws MetaException {
    Map<String, Object> line = start("onAlterPartition", e);
    names(line, e.getTable());
    line.put("table", table(e.getTable()));
    line.put("oldPartition", partition(e.getOldPartition()));
    line.put("newPartition", partition(e.getNewPartition()));
    line.put("isTruncateOp", call(e, "getIsTruncateOp"));
    write(line);
  }

  @Override
  public void onInsert(InsertEvent e) throws MetaException {
    Map<String, Object> line = start("onInsert", e);
    Object tableObj = call(e, "getTableObj"); // Hive 3+
    if (tableObj instanceof Table) {
      names(line, (Table) tableObj);
      line.put("table", table((Table) tableObj));
      Partition p = (Partition) call(e, "getPartitionObj");
      line.put("partitionValues", p == null ? new ArrayList<String>() : p.getValues());
    } else { // Hive 2.3: names and the partition's key -> value map
      line.put("db", call(e, "getDb"));
      line.put("tableName", call(e, "getTable"));
      line.put("table", null);
      @SuppressWarnings("unchecked")
      Map<String, String> keyValues = (Map<String, String>) call(e, "getPartitionKeyValues");
      line.put("partitionValues", keyValues == null ? new ArrayList<String>() : new ArrayList<>(keyValues.values()));
    }
    line.put("files", e.getFiles() == null ? null : new ArrayList<>(e.getFiles()));
    line.put("fileChecksums", e.getFileChecksums());
    write(line);
  }

  // Callbacks Drone Fly never delivers (Apiary publishes no such events): recorded all the same, so one would show.

  @Override
  public void onConfigChange(ConfigChangeEvent e) throws MetaException {
    write(start("onConfigChange", e));
  }

  @Override
  public void onCreateDatabase(CreateDatabaseEvent e) throws MetaException {
    write(start("onCreateDatabase", e));
  }

  @Override
  public void onDropDatabase(DropDatabaseEvent e) throws MetaException {
    write(start("onDropDatabase", e));
  }

  @Override
  public void onLoadPartitionDone(LoadPartitionDoneEvent e) throws MetaException {
    write(start("onLoadPartitionDone", e));
  }

  @Override
  public void onCreateFunction(CreateFunctionEvent e) throws MetaException {
    write(start("onCreateFunction", e));
  }

  @Override
  public void onDropFunction(DropFunctionEvent e) throws MetaException {
    write(start("onDropFunction", e));
  }
}
