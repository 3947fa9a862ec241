import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.*;
import org.apache.hadoop.hbase.client.*;
import org.apache.hadoop.hbase.util.Bytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

public class ClientFailures {
  static final Logger LOG = LoggerFactory.getLogger("app.Client");
  static final byte[] F = Bytes.toBytes("f");

  public static void main(String[] a) throws Exception {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.zookeeper.quorum", "127.0.0.1");
    c.set("hbase.zookeeper.property.clientPort", a[0]);
    c.setInt("hbase.client.retries.number", 2);
    c.setInt("hbase.client.pause", 200);
    c.setInt("hbase.client.operation.timeout", 20000);
    String what = a.length > 1 ? a[1] : "all";
    try (Connection conn = ConnectionFactory.createConnection(c); Admin admin = conn.getAdmin()) {
      TableName t = TableName.valueOf("doctor_client_" + System.currentTimeMillis());
      admin.createTable(TableDescriptorBuilder.newBuilder(t).setColumnFamily(ColumnFamilyDescriptorBuilder.of(F)).build());
      try (Table table = conn.getTable(t)) {
        for (int i = 0; i < 3; i++) table.put(new Put(Bytes.toBytes("r" + i)).addColumn(F, F, Bytes.toBytes("v")));
        if (what.equals("all") || what.equals("cell")) {
          try {
            table.put(new Put(Bytes.toBytes("huge")).addColumn(F, F, new byte[11 << 20]));
          } catch (Exception e) { LOG.error("put of a huge cell failed", e); }
        }
        if (what.equals("all") || what.equals("lease")) {
          Scan s = new Scan().setCaching(1);
          try (ResultScanner rs = table.getScanner(s)) {
            rs.next();
            LOG.info("sleeping past the scanner lease");
            Thread.sleep(65000);
            rs.next(); rs.next();
          } catch (Exception e) { LOG.error("scan failed", e); }
        }
      }
      if (what.equals("all") || what.equals("disabled")) {
        admin.disableTable(t);
        try (Table table = conn.getTable(t)) {
          List<Put> puts = new ArrayList<>();
          for (int i = 0; i < 5; i++) puts.add(new Put(Bytes.toBytes("d" + i)).addColumn(F, F, Bytes.toBytes("v")));
          try { table.put(puts); } catch (Exception e) { LOG.error("batch put to a disabled table failed", e); }
          try { table.get(new Get(Bytes.toBytes("r0"))); } catch (Exception e) { LOG.error("get from a disabled table failed", e); }
        }
        try (BufferedMutator bm = conn.getBufferedMutator(t)) {
          for (int i = 0; i < 5; i++) bm.mutate(new Put(Bytes.toBytes("b" + i)).addColumn(F, F, Bytes.toBytes("v")));
          bm.flush();
        } catch (Exception e) { LOG.error("buffered writes to a disabled table failed", e); }
      }
      if (what.equals("all") || what.equals("rowbig")) {
        // The region server reads hbase.table.max.rowsize from the table's
        // own values too, so one table can have a small limit.
        TableName small = TableName.valueOf(t.getNameAsString() + "_rows");
        admin.createTable(TableDescriptorBuilder.newBuilder(small).setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
          .setValue("hbase.table.max.rowsize", "1048576").build());
        try (Table table = conn.getTable(small)) {
          for (int i = 0; i < 3; i++) table.put(new Put(Bytes.toBytes("wide")).addColumn(F, Bytes.toBytes("q" + i), new byte[512 * 1024]));
          try { table.get(new Get(Bytes.toBytes("wide"))); } catch (Exception e) { LOG.error("get of a wide row failed", e); }
        }
        admin.disableTable(small);
        admin.deleteTable(small);
      }
      if (what.equals("queue")) {
        // Only against a server started with a small
        // hbase.ipc.server.max.callqueue.size (1 MB): a 2 MB request alone
        // is more than its call queue may hold.
        try (Table table = conn.getTable(t)) {
          table.put(new Put(Bytes.toBytes("big")).addColumn(F, F, new byte[2 << 20]));
        } catch (Exception e) { LOG.error("put of a 2 MB cell failed", e); }
      }
      if (what.equals("all") || what.equals("missing")) {
        try (Table table = conn.getTable(TableName.valueOf("doctor_no_such_table"))) {
          table.put(new Put(Bytes.toBytes("x")).addColumn(F, F, Bytes.toBytes("v")));
        } catch (Exception e) { LOG.error("put to a missing table failed", e); }
      }
      if (admin.isTableEnabled(t)) admin.disableTable(t);
      admin.deleteTable(t);
    }
  }
}
