package hivewire.test;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.CreateDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.CreateTableEvent;
import org.apache.hadoop.hive.metastore.events.DropDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.DropPartitionEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;
import org.apache.hadoop.hive.metastore.events.InsertEvent;
import org.apache.hadoop.hive.metastore.events.ListenerEvent;
import org.apache.thrift.TBase;
import org.apache.thrift.TException;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;

/**
 * The test suite's oracle: what the metastore's own listener API receives, one JSON line per event.
 *
 * <p>Loaded by the test metastore (hive.metastore.event.listeners). Each line holds the event type, status,
 * parameters and every object of the event as base64 of its Thrift binary encoding, so the tests compare
 * hivewire's events with the metastore's field by field, unset fields included. The file is the
 * hive-site.xml property hivewire.test.recording.file.
 */
public class RecordingListener extends MetaStoreEventListener {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final OutputStream out;

  public RecordingListener(Configuration conf) throws IOException {
    super(conf);
    String path = conf.get("hivewire.test.recording.file");
    if (path == null) {
      throw new IOException("set hivewire.test.recording.file in hive-site.xml");
    }
    out = new FileOutputStream(path, true);
  }

  private static String thrift(TBase<?, ?> object) throws MetaException {
    if (object == null) {
      return null;
    }
    try {
      return Base64.getEncoder().encodeToString(new TSerializer(new TBinaryProtocol.Factory()).serialize(object));
    } catch (TException e) {
      throw new MetaException("RecordingListener: " + e);
    }
  }

  private static List<String> partitions(Iterator<Partition> partitions) throws MetaException {
    List<String> out = new ArrayList<>();
    while (partitions.hasNext()) {
      out.add(thrift(partitions.next()));
    }
    return out;
  }

  private Map<String, Object> start(String type, ListenerEvent event) throws MetaException {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("event", type);
    line.put("status", event.getStatus());
    line.put("parameters", event.getParameters());
    line.put("environmentContext", thrift(event.getEnvironmentContext()));
    return line;
  }

  private synchronized void write(Map<String, Object> line) throws MetaException {
    try {
      out.write(JSON.writeValueAsString(line).getBytes(StandardCharsets.UTF_8));
      out.write('\n');
      out.flush();
    } catch (IOException e) {
      throw new MetaException("RecordingListener: " + e);
    }
  }

  @Override
  public void onCreateTable(CreateTableEvent event) throws MetaException {
    Map<String, Object> line = start("CREATE_TABLE", event);
    line.put("table", thrift(event.getTable()));
    write(line);
  }

  @Override
  public void onAlterTable(AlterTableEvent event) throws MetaException {
    Map<String, Object> line = start("ALTER_TABLE", event);
    line.put("oldTable", thrift(event.getOldTable()));
    line.put("newTable", thrift(event.getNewTable()));
    write(line);
  }

  @Override
  public void onDropTable(DropTableEvent event) throws MetaException {
    Map<String, Object> line = start("DROP_TABLE", event);
    line.put("table", thrift(event.getTable()));
    line.put("deleteData", event.getDeleteData());
    write(line);
  }

  @Override
  public void onAddPartition(AddPartitionEvent event) throws MetaException {
    Map<String, Object> line = start("ADD_PARTITION", event);
    line.put("table", thrift(event.getTable()));
    line.put("partitions", partitions(event.getPartitionIterator()));
    write(line);
  }

  @Override
  public void onAlterPartition(AlterPartitionEvent event) throws MetaException {
    Map<String, Object> line = start("ALTER_PARTITION", event);
    line.put("table", thrift(event.getTable()));
    line.put("oldPartition", thrift(event.getOldPartition()));
    line.put("newPartition", thrift(event.getNewPartition()));
    write(line);
  }

  @Override
  public void onDropPartition(DropPartitionEvent event) throws MetaException {
    Map<String, Object> line = start("DROP_PARTITION", event);
    line.put("table", thrift(event.getTable()));
    line.put("partitions", partitions(event.getPartitionIterator()));
    line.put("deleteData", event.getDeleteData());
    write(line);
  }

  /**
   * The database, table and partition values of an insert. Hive 2.x's InsertEvent has getDb, getTable and
   * getPartitionKeyValues; 3.x and 4.x have getTableObj and getPartitionObj instead (reflection, so that one
   * source compiles against every release).
   */
  @SuppressWarnings("unchecked")
  private static void insertTarget(InsertEvent event, Map<String, Object> line) throws MetaException {
    try {
      try {
        line.put("databaseName", InsertEvent.class.getMethod("getDb").invoke(event));
        line.put("tableName", InsertEvent.class.getMethod("getTable").invoke(event));
        line.put("partitionKeyValues", InsertEvent.class.getMethod("getPartitionKeyValues").invoke(event));
        return;
      } catch (NoSuchMethodException e) {
        // Hive 3.0+
      }
      org.apache.hadoop.hive.metastore.api.Table table =
          (org.apache.hadoop.hive.metastore.api.Table) InsertEvent.class.getMethod("getTableObj").invoke(event);
      Partition partition = (Partition) InsertEvent.class.getMethod("getPartitionObj").invoke(event);
      line.put("databaseName", table.getDbName());
      line.put("tableName", table.getTableName());
      Map<String, String> values = new LinkedHashMap<>();
      if (partition != null) {
        for (int i = 0; i < table.getPartitionKeys().size(); i++) {
          values.put(table.getPartitionKeys().get(i).getName(), partition.getValues().get(i));
        }
      }
      line.put("partitionKeyValues", values);
    } catch (ReflectiveOperationException e) {
      throw new MetaException("cannot read the insert event: " + e);
    }
  }

  @Override
  public void onInsert(InsertEvent event) throws MetaException {
    Map<String, Object> line = start("INSERT", event);
    insertTarget(event, line);
    line.put("files", event.getFiles());
    line.put("fileChecksums", event.getFileChecksums());
    write(line);
  }

  @Override
  public void onCreateDatabase(CreateDatabaseEvent event) throws MetaException {
    Map<String, Object> line = start("CREATE_DATABASE", event);
    line.put("database", thrift(event.getDatabase()));
    write(line);
  }

  @Override
  public void onDropDatabase(DropDatabaseEvent event) throws MetaException {
    Map<String, Object> line = start("DROP_DATABASE", event);
    line.put("database", thrift(event.getDatabase()));
    write(line);
  }
}
