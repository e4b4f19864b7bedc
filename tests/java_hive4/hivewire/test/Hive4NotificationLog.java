package hivewire.test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HMSHandler;
import org.apache.hadoop.hive.metastore.MetaStoreEventListenerConstants;
import org.apache.hadoop.hive.metastore.ReplChangeManager;
import org.apache.hadoop.hive.metastore.TransactionalMetaStoreEventListener;
import org.apache.hadoop.hive.metastore.Warehouse;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.Function;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.NotificationEvent;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.CreateDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.CreateFunctionEvent;
import org.apache.hadoop.hive.metastore.events.CreateTableEvent;
import org.apache.hadoop.hive.metastore.events.DropDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.DropFunctionEvent;
import org.apache.hadoop.hive.metastore.events.DropPartitionEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;
import org.apache.hadoop.hive.metastore.events.InsertEvent;
import org.apache.hadoop.hive.metastore.events.ListenerEvent;
import org.apache.hadoop.hive.metastore.messaging.EventMessage;
import org.apache.hadoop.hive.metastore.messaging.EventMessage.EventType;
import org.apache.hadoop.hive.metastore.messaging.MessageBuilder;
import org.apache.hadoop.hive.metastore.messaging.MessageEncoder;
import org.apache.hadoop.hive.metastore.messaging.MessageFactory;

/**
 * The notification log of a Hive 4.0.1 metastore, written with Hive's own code: the glue DbNotificationListener
 * is (hcatalog's, not served for 4.0.1 in a jar this metastore loads).
 *
 * <p>Configured as Hive configures its own, in {@code metastore.transactional.event.listeners}: the metastore
 * calls it inside each change's transaction. For each event it builds the message with Hive's
 * {@code MessageBuilder}, serializes it with the encoder of {@code metastore.event.message.factory} (Hive 4's
 * default: {@code GzipJSONMessageEncoder}, format {@code gzip(json-2.0)}), sets the entry's type, catalog,
 * database and table as DbNotificationListener does, and stores it with the metastore's own
 * {@code RawStore.addNotificationEvent} (the thread's RawStore: the event's transaction). The stored id goes
 * into the event's parameters ({@code DB_NOTIFICATION_EVENT_ID_KEY_NAME}) for the listeners after it.
 *
 * <p>What it leaves out of DbNotificationListener: the file lists of managed tables' and partitions' directories
 * (the tests' tables are external, for which Hive lists none either), the cleaner thread (the log's retention),
 * and the transaction, constraint and statistics events (the tests make none; no ACID tables here).
 */
public class Hive4NotificationLog extends TransactionalMetaStoreEventListener {
  private final Configuration conf;
  private final MessageEncoder encoder;
  private final MessageBuilder builder = MessageBuilder.getInstance();

  public Hive4NotificationLog(Configuration conf) throws MetaException {
    super(conf);
    this.conf = conf;
    this.encoder = MessageFactory.getDefaultInstance(conf);
  }

  private static int now() {
    return (int) (System.currentTimeMillis() / 1000);
  }

  private static String catalog(String name) {
    return name == null ? Warehouse.DEFAULT_CATALOG_NAME : name;
  }

  private void store(ListenerEvent source, EventType type, EventMessage message, String cat, String db,
      String table) throws MetaException {
    NotificationEvent event =
        new NotificationEvent(0, now(), type.toString(), encoder.getSerializer().serialize(message));
    event.setCatName(catalog(cat));
    event.setDbName(db);
    if (table != null) {
      event.setTableName(table);
    }
    event.setMessageFormat(encoder.getMessageFormat());
    HMSHandler.getMSForConf(conf).addNotificationEvent(event);
    if (event.isSetEventId()) {
      source.putParameter(MetaStoreEventListenerConstants.DB_NOTIFICATION_EVENT_ID_KEY_NAME,
          Long.toString(event.getEventId()));
    }
  }

  private void store(ListenerEvent source, EventType type, EventMessage message, Table t) throws MetaException {
    store(source, type, message, t.isSetCatName() ? t.getCatName() : null, t.getDbName(), t.getTableName());
  }

  @Override
  public void onCreateTable(CreateTableEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, EventType.CREATE_TABLE, builder.buildCreateTableMessage(t, null), t);
  }

  @Override
  public void onAlterTable(AlterTableEvent event) throws MetaException {
    Table after = event.getNewTable();
    store(event, EventType.ALTER_TABLE,
        builder.buildAlterTableMessage(event.getOldTable(), after, event.getIsTruncateOp(), event.getWriteId()),
        after);
  }

  @Override
  public void onDropTable(DropTableEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, EventType.DROP_TABLE, builder.buildDropTableMessage(t), t);
  }

  @Override
  public void onAddPartition(AddPartitionEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, EventType.ADD_PARTITION, builder.buildAddPartitionMessage(t, event.getPartitionIterator(), null),
        t);
  }

  @Override
  public void onAlterPartition(AlterPartitionEvent event) throws MetaException {
    Partition before = event.getOldPartition();
    store(event, EventType.ALTER_PARTITION,
        builder.buildAlterPartitionMessage(event.getTable(), before, event.getNewPartition(),
            event.getIsTruncateOp(), event.getWriteId()),
        before.isSetCatName() ? before.getCatName() : null, before.getDbName(), before.getTableName());
  }

  @Override
  public void onDropPartition(DropPartitionEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, EventType.DROP_PARTITION, builder.buildDropPartitionMessage(t, event.getPartitionIterator()), t);
  }

  @Override
  public void onCreateDatabase(CreateDatabaseEvent event) throws MetaException {
    Database db = event.getDatabase();
    store(event, EventType.CREATE_DATABASE, builder.buildCreateDatabaseMessage(db),
        db.isSetCatalogName() ? db.getCatalogName() : null, db.getName(), null);
  }

  @Override
  public void onAlterDatabase(AlterDatabaseEvent event) throws MetaException {
    Database before = event.getOldDatabase();
    store(event, EventType.ALTER_DATABASE, builder.buildAlterDatabaseMessage(before, event.getNewDatabase()),
        before.isSetCatalogName() ? before.getCatalogName() : null, before.getName(), null);
  }

  @Override
  public void onDropDatabase(DropDatabaseEvent event) throws MetaException {
    Database db = event.getDatabase();
    store(event, EventType.DROP_DATABASE, builder.buildDropDatabaseMessage(db),
        db.isSetCatalogName() ? db.getCatalogName() : null, db.getName(), null);
  }

  @Override
  public void onCreateFunction(CreateFunctionEvent event) throws MetaException {
    Function fn = event.getFunction();
    store(event, EventType.CREATE_FUNCTION, builder.buildCreateFunctionMessage(fn),
        fn.isSetCatName() ? fn.getCatName() : null, fn.getDbName(), null);
  }

  @Override
  public void onDropFunction(DropFunctionEvent event) throws MetaException {
    Function fn = event.getFunction();
    store(event, EventType.DROP_FUNCTION, builder.buildDropFunctionMessage(fn),
        fn.isSetCatName() ? fn.getCatName() : null, fn.getDbName(), null);
  }

  @Override
  public void onInsert(InsertEvent event) throws MetaException {
    Table t = event.getTableObj();
    List<String> files = event.getFiles();
    List<String> checksums = event.getFileChecksums();
    if (checksums != null && !checksums.isEmpty() && checksums.size() != files.size()) {
      throw new IllegalStateException("Number of files and checksums do not match for insert event");
    }
    List<String> encoded = new ArrayList<>();
    try {
      ReplChangeManager cm = ReplChangeManager.getInstance(conf);
      for (int i = 0; i < files.size(); i++) {
        String checksum = checksums != null && !checksums.isEmpty() ? checksums.get(i) : null;
        encoded.add(cm.encodeFileUri(files.get(i), checksum, null)); // DbNotificationListener's FileChksumIterator
      }
    } catch (IOException e) {
      throw new MetaException("Encoding file URI failed: " + e.getMessage());
    }
    Iterator<String> fileIterator = encoded.iterator();
    store(event, EventType.INSERT,
        builder.buildInsertMessage(t, event.getPartitionObj(), event.isReplace(), fileIterator), t);
  }
}
