package hivewire.test;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.MetaStoreInitContext;
import org.apache.hadoop.hive.metastore.MetaStoreInitListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/**
 * Creates Hive 2.3's transaction and lock tables in the test metastore's Derby database when the metastore
 * starts ({@code hive.metastore.init.hooks}), so that clients can take table locks ({@code lock},
 * {@code check_lock}, {@code unlock}), as pyiceberg's and Iceberg's HiveCatalog do around every commit.
 *
 * <p>A production metastore has these tables from {@code schematool}; the test metastore's schema comes from
 * DataNucleus ({@code datanucleus.schema.autoCreateAll}), which makes only the JDO tables. Hive's own way for
 * tests, {@code hive.in.test=true}, also creates them, but then refuses every lock whose operation type is
 * UNSET, which is what pyiceberg sends. {@code TxnDbUtil.prepDb} skips tables that already exist.
 */
public class TransactionTables extends MetaStoreInitListener {
  public TransactionTables(Configuration conf) {
    super(conf);
  }

  @Override
  public void onInit(MetaStoreInitContext context) throws MetaException {
    try {
      TxnDbUtil.prepDb(new HiveConf(getConf(), TransactionTables.class));
    } catch (Exception e) {
      throw new MetaException("could not create the transaction tables: " + e);
    }
  }
}
