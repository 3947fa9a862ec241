// Probe checks a running Thrift2 gateway end to end, speaking the same wire format the Go
// client must use: a plain socket (no framing) carrying the binary protocol. It creates a
// throwaway table, writes one cell, reads it back, and drops the table again, so a green probe
// means DDL, writes and reads all work, not merely that a port is open.
//
// Run by `hbase.sh probe` with Java's single-file source launcher; the classpath is the one
// `hbase.sh fetch` resolved (the Thrift stubs ship inside the hbase-thrift jar).

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;

import org.apache.hadoop.hbase.thrift2.generated.TColumnFamilyDescriptor;
import org.apache.hadoop.hbase.thrift2.generated.TColumnValue;
import org.apache.hadoop.hbase.thrift2.generated.TGet;
import org.apache.hadoop.hbase.thrift2.generated.THBaseService;
import org.apache.hadoop.hbase.thrift2.generated.TPut;
import org.apache.hadoop.hbase.thrift2.generated.TResult;
import org.apache.hadoop.hbase.thrift2.generated.TTableDescriptor;
import org.apache.hadoop.hbase.thrift2.generated.TTableName;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;

public class Probe {
  private static ByteBuffer bytes(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
  }

  public static void main(String[] args) throws Exception {
    String host = args.length > 0 ? args[0] : "127.0.0.1";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 9090;
    // A per-run name keeps two probes (or a probe and a crashed earlier one) from colliding.
    String table = "denorm_probe_" + Long.toHexString(System.nanoTime());
    String want = "v-" + System.currentTimeMillis();

    TSocket socket = new TSocket(host, port);
    socket.setTimeout(60_000);
    socket.open();
    try {
      THBaseService.Client client = new THBaseService.Client(new TBinaryProtocol(socket));
      TTableName name = new TTableName().setNs(bytes("default")).setQualifier(bytes(table));

      long t0 = System.nanoTime();
      TTableDescriptor desc = new TTableDescriptor().setTableName(name)
          .setColumns(List.of(new TColumnFamilyDescriptor().setName(bytes("f"))));
      client.createTable(desc, Collections.emptyList());
      long t1 = System.nanoTime();

      ByteBuffer tbl = bytes("default:" + table);
      client.put(tbl, new TPut(bytes("row1"),
          List.of(new TColumnValue(bytes("f"), bytes("q"), bytes(want)))));
      TResult got = client.get(tbl, new TGet(bytes("row1")));
      long t2 = System.nanoTime();

      if (got.getColumnValuesSize() != 1) {
        throw new IllegalStateException("expected 1 cell back, got " + got.getColumnValuesSize());
      }
      String have = new String(got.getColumnValues().get(0).getValue(), StandardCharsets.UTF_8);
      if (!want.equals(have)) {
        throw new IllegalStateException("read back " + have + ", wrote " + want);
      }

      client.disableTable(name);
      client.deleteTable(name);
      long t3 = System.nanoTime();
      System.out.printf("probe ok: %s:%d table %s createTable %dms, put+get %dms, drop %dms%n",
          host, port, table, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000);
    } finally {
      socket.close();
    }
  }
}
