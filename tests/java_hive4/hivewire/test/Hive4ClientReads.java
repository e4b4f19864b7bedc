package hivewire.test;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;

/**
 * Hive 4's own metastore client, configured for ZooKeeper service discovery (HIVE-20794), reads a setting of
 * whichever metastore it finds: {@code java Hive4ClientReads QUORUM NAMESPACE KEY} prints "CONF value"
 * (getConfigValue, which every release answers alike; Hive 4's getAllDatabases sends a catalog-prefixed pattern
 * that a 2.3 metastore matches against nothing).
 *
 * <p>Compiled against Hive 4's jars only (not the pyspark jars tests/java is compiled against), so it lives apart.
 */
public class Hive4ClientReads {
  public static void main(String[] args) throws Exception {
    Configuration conf = MetastoreConf.newMetastoreConf();
    conf.set("metastore.service.discovery.mode", "zookeeper");
    conf.set("metastore.thrift.uris", args[0]);
    conf.set("metastore.zookeeper.namespace", args[1]);
    HiveMetaStoreClient client = new HiveMetaStoreClient(conf);
    try {
      System.out.println("CONF " + client.getConfigValue(args[2], ""));
    } finally {
      client.close();
    }
  }
}
