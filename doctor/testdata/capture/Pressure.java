import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.*;
import org.apache.hadoop.hbase.client.*;
import org.apache.hadoop.hbase.util.Bytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

// Writes into a table whose own settings make the region server block:
// a tiny memstore, compactions off and a low store-file limit.
public class Pressure {
  static final Logger LOG = LoggerFactory.getLogger("app.Writer");
  static final byte[] F = Bytes.toBytes("f");

  public static void main(String[] a) throws Exception {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.zookeeper.quorum", "127.0.0.1");
    c.set("hbase.zookeeper.property.clientPort", a[0]);
    c.setInt("hbase.client.retries.number", Integer.parseInt(a[3]));
    c.setInt("hbase.client.pause", 100);
    long seconds = Long.parseLong(a[2]);
    try (Connection conn = ConnectionFactory.createConnection(c); Admin admin = conn.getAdmin()) {
      TableName t = TableName.valueOf(a[1]);
      admin.createTable(TableDescriptorBuilder.newBuilder(t)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
        .setCompactionEnabled(false)
        .setRegionSplitPolicyClassName("org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy")
        .setMemStoreFlushSize(128 * 1024)
        .setValue("hbase.table.sanity.checks", "false")
        .setValue("hbase.hregion.memstore.block.multiplier", "2")
        .setValue("hbase.hstore.blockingStoreFiles", "4")
        .setValue("hbase.hstore.blockingWaitTime", "5000")
        .build());
      byte[] v = new byte[100 * 1024];
      long end = System.currentTimeMillis() + seconds * 1000;
      int ok = 0, failed = 0;
      try (Table table = conn.getTable(t)) {
        for (int i = 0; System.currentTimeMillis() < end; i++) {
          List<Put> puts = new ArrayList<>();
          for (int j = 0; j < 5; j++) puts.add(new Put(Bytes.toBytes(String.format("r%08d", i * 5 + j))).addColumn(F, F, v));
          try { table.put(puts); ok++; } catch (Exception e) { failed++; if (failed <= 3) LOG.error("batch put failed", e); }
        }
      }
      LOG.info("batches written: " + ok + ", failed: " + failed);
    }
  }
}
