package hivewire.test;

import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.ArrayList;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.RawStore;
import org.apache.hadoop.hive.metastore.api.Database;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.NotificationEvent;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
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
import org.apache.hadoop.hive.metastore.messaging.MessageFactory;
import org.apache.hadoop.hive.metastore.messaging.PartitionFiles;

/**
 * The notification log for the test metastore, written as Hive 2.3's DbNotificationListener writes it.
 *
 * <p>The pyspark wheel has Hive's JSONMessageFactory but not hcatalog's DbNotificationListener: this listener
 * builds each message with the metastore's own MessageFactory and stores it with the metastore's own
 * RawStore.addNotificationEvent, so clients read it through the real get_next_notification. Files are not
 * listed (DbNotificationListener lists the table's directory; the tests need no file lists), and failed
 * operations are not logged, as with a transactional DbNotificationListener.
 *
 * <p>For the tests of gaps: creating a database named {@code hivewire_clean_notification_log} first removes
 * every entry older than the current second (RawStore.cleanNotificationEvents(0), what the retention cleaner
 * does once entries pass hive.metastore.event.db.listener.timetolive).
 */
public class NotificationLogListener extends MetaStoreEventListener {
  public static final String CLEAN_TRIGGER = "hivewire_clean_notification_log";
  private static final Object LOCK = new Object();
  private final MessageFactory factory = MessageFactory.getInstance();

  public NotificationLogListener(Configuration conf) {
    super(conf);
  }

  private static int now() {
    return (int) (System.currentTimeMillis() / 1000);
  }

  private static <T> Iterator<T> none() {
    return Collections.emptyIterator();
  }

  private void store(ListenerEvent source, String type, Object message, String db, String table)
      throws MetaException {
    if (!source.getStatus()) {
      return;
    }
    NotificationEvent event = new NotificationEvent(0, now(), type, message.toString());
    event.setDbName(db);
    event.setTableName(table);
    event.setMessageFormat(factory.getMessageFormat());
    RawStore store = source.getHandler().getMS();
    synchronized (LOCK) { // as DbNotificationListener's NOTIFICATION_TBL_LOCK
      store.addNotificationEvent(event);
    }
  }

  @Override
  public void onCreateTable(CreateTableEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, MessageFactory.CREATE_TABLE_EVENT, factory.buildCreateTableMessage(t, none()), t.getDbName(),
        t.getTableName());
  }

  @Override
  public void onAlterTable(AlterTableEvent event) throws MetaException {
    Table after = event.getNewTable();
    store(event, MessageFactory.ALTER_TABLE_EVENT, factory.buildAlterTableMessage(event.getOldTable(), after),
        after.getDbName(), after.getTableName());
  }

  @Override
  public void onDropTable(DropTableEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, MessageFactory.DROP_TABLE_EVENT, factory.buildDropTableMessage(t), t.getDbName(),
        t.getTableName());
  }

  @Override
  public void onAddPartition(AddPartitionEvent event) throws MetaException {
    Table t = event.getTable();
    List<PartitionFiles> files = new ArrayList<>();
    store(event, MessageFactory.ADD_PARTITION_EVENT,
        factory.buildAddPartitionMessage(t, event.getPartitionIterator(), files.iterator()), t.getDbName(),
        t.getTableName());
  }

  @Override
  public void onAlterPartition(AlterPartitionEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, MessageFactory.ALTER_PARTITION_EVENT,
        factory.buildAlterPartitionMessage(t, event.getOldPartition(), event.getNewPartition()), t.getDbName(),
        t.getTableName());
  }

  @Override
  public void onDropPartition(DropPartitionEvent event) throws MetaException {
    Table t = event.getTable();
    store(event, MessageFactory.DROP_PARTITION_EVENT,
        factory.buildDropPartitionMessage(t, event.getPartitionIterator()), t.getDbName(), t.getTableName());
  }

  @Override
  public void onCreateDatabase(CreateDatabaseEvent event) throws MetaException {
    Database db = event.getDatabase();
    if (CLEAN_TRIGGER.equals(db.getName())) {
      synchronized (LOCK) {
        event.getHandler().getMS().cleanNotificationEvents(0);
      }
    }
    store(event, MessageFactory.CREATE_DATABASE_EVENT, factory.buildCreateDatabaseMessage(db), db.getName(), null);
  }

  @Override
  public void onDropDatabase(DropDatabaseEvent event) throws MetaException {
    Database db = event.getDatabase();
    store(event, MessageFactory.DROP_DATABASE_EVENT, factory.buildDropDatabaseMessage(db), db.getName(), null);
  }

  @Override
  public void onCreateFunction(CreateFunctionEvent event) throws MetaException {
    store(event, MessageFactory.CREATE_FUNCTION_EVENT, factory.buildCreateFunctionMessage(event.getFunction()),
        event.getFunction().getDbName(), null);
  }

  @Override
  public void onDropFunction(DropFunctionEvent event) throws MetaException {
    store(event, MessageFactory.DROP_FUNCTION_EVENT, factory.buildDropFunctionMessage(event.getFunction()),
        event.getFunction().getDbName(), null);
  }

  @Override
  public void onInsert(InsertEvent event) throws MetaException {
    List<String> files = new ArrayList<>();
    List<String> checksums = event.getFileChecksums();
    for (int i = 0; i < event.getFiles().size(); i++) {
      String checksum = checksums == null || i >= checksums.size() ? null : checksums.get(i);
      // ReplChangeManager.encodeFileUri of Hive 2.3: path#checksum, or the path alone without a checksum
      files.add(checksum == null ? event.getFiles().get(i) : event.getFiles().get(i) + "#" + checksum);
    }
    store(event, MessageFactory.INSERT_EVENT,
        factory.buildInsertMessage(event.getDb(), event.getTable(), event.getPartitionKeyValues(),
            files.iterator()), event.getDb(), event.getTable());
  }
}
