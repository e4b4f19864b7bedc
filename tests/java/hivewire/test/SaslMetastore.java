package hivewire.test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.Provider;
import java.security.Security;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import javax.security.sasl.SaslServerFactory;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TSaslServerTransport;
import org.apache.thrift.transport.TServerSocket;

/**
 * The real metastore handler (HiveMetaStore's HMSHandler through ThriftHiveMetastore.Processor) behind
 * libthrift's TSaslServerTransport, for the tests of SASL towards the metastore.
 *
 * <p>Arguments as HiveMetaStore takes them ({@code -p PORT}); the rest comes from the hive-site.xml on the
 * classpath. PORT offers DIGEST-MD5 (the JDK's own SaslServer) and PLAIN (the JDK has none: {@link
 * PlainServer} below); {@code hivewire.test.sasl.digest.only.port} offers DIGEST-MD5 alone, for the test of a
 * mechanism the server does not offer. One user, {@code hivewire.test.sasl.user} with {@code
 * hivewire.test.sasl.password}; DIGEST-MD5 names the server {@code hive/<hivewire.test.sasl.server>}. The
 * quality of protection is {@code auth}, Hive's default (hadoop.rpc.protection=authentication).
 */
public class SaslMetastore {
  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[1]);
    HiveConf conf = new HiveConf(SaslMetastore.class);
    CallbackHandler users =
        new User(conf.get("hivewire.test.sasl.user"), conf.get("hivewire.test.sasl.password"));
    String serverName = conf.get("hivewire.test.sasl.server", "127.0.0.1");
    Security.addProvider(new PlainProvider());
    ThriftHiveMetastore.Iface handler = HiveMetaStore.newRetryingHMSHandler("hivewire-sasl", conf, false);
    TProcessor processor = new ThriftHiveMetastore.Processor<>(handler);
    TServer digestOnly =
        server(conf.getInt("hivewire.test.sasl.digest.only.port", 0), processor, users, serverName, false);
    Thread thread = new Thread(digestOnly::serve, "digest-only");
    thread.setDaemon(true);
    thread.start();
    server(port, processor, users, serverName, true).serve();
  }

  private static TServer server(
      int port, TProcessor processor, CallbackHandler users, String serverName, boolean plain) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put(Sasl.QOP, "auth");
    TSaslServerTransport.Factory transports = new TSaslServerTransport.Factory();
    transports.addServerDefinition("DIGEST-MD5", "hive", serverName, props, users);
    if (plain) {
      transports.addServerDefinition("PLAIN", "hive", serverName, props, users);
    }
    TServerSocket socket = new TServerSocket(new InetSocketAddress("127.0.0.1", port));
    return new TThreadPoolServer(
        new TThreadPoolServer.Args(socket)
            .processor(processor)
            .transportFactory(transports)
            .protocolFactory(new TBinaryProtocol.Factory())
            .minWorkerThreads(2)
            .maxWorkerThreads(64));
  }

  /** The one user: its password for DIGEST-MD5 and PLAIN, and authorized as itself only. */
  static final class User implements CallbackHandler {
    private final String name;
    private final String password;

    User(String name, String password) {
      this.name = name;
      this.password = password;
    }

    @Override
    public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
      String who = null;
      for (Callback c : callbacks) {
        if (c instanceof NameCallback) {
          NameCallback n = (NameCallback) c;
          who = n.getName() != null ? n.getName() : n.getDefaultName();
        }
      }
      for (Callback c : callbacks) {
        if (c instanceof PasswordCallback) {
          if (name.equals(who)) {
            ((PasswordCallback) c).setPassword(password.toCharArray());
          }
        } else if (c instanceof RealmCallback) {
          RealmCallback r = (RealmCallback) c;
          r.setText(r.getDefaultText());
        } else if (c instanceof AuthorizeCallback) {
          AuthorizeCallback a = (AuthorizeCallback) c;
          a.setAuthorized(a.getAuthenticationID().equals(a.getAuthorizationID()));
          if (a.isAuthorized()) {
            a.setAuthorizedID(a.getAuthorizationID());
          }
        } else if (!(c instanceof NameCallback)) {
          throw new UnsupportedCallbackException(c);
        }
      }
    }
  }

  /** RFC 4616 PLAIN: one message, authzid NUL authcid NUL passwd, checked against the callback's password. */
  static final class PlainServer implements SaslServer {
    private final CallbackHandler users;
    private String authorized;

    PlainServer(CallbackHandler users) {
      this.users = users;
    }

    @Override
    public String getMechanismName() {
      return "PLAIN";
    }

    @Override
    public byte[] evaluateResponse(byte[] response) throws SaslException {
      String[] parts = new String(response, StandardCharsets.UTF_8).split("\0", -1);
      if (parts.length != 3) {
        throw new SaslException("PLAIN: malformed response");
      }
      NameCallback name = new NameCallback("user", parts[1]);
      PasswordCallback password = new PasswordCallback("password", false);
      try {
        users.handle(new Callback[] {name, password});
      } catch (Exception e) {
        throw new SaslException("PLAIN: " + e, e);
      }
      char[] expected = password.getPassword();
      if (expected == null || !new String(expected).equals(parts[2])) {
        throw new SaslException("PLAIN: authentication failed for user " + parts[1]);
      }
      authorized = parts[0].isEmpty() ? parts[1] : parts[0];
      return new byte[0];
    }

    @Override
    public boolean isComplete() {
      return authorized != null;
    }

    @Override
    public String getAuthorizationID() {
      return authorized;
    }

    @Override
    public byte[] unwrap(byte[] incoming, int offset, int len) {
      throw new IllegalStateException("PLAIN has no security layer");
    }

    @Override
    public byte[] wrap(byte[] outgoing, int offset, int len) {
      throw new IllegalStateException("PLAIN has no security layer");
    }

    @Override
    public Object getNegotiatedProperty(String propName) {
      return Sasl.QOP.equals(propName) ? "auth" : null;
    }

    @Override
    public void dispose() {}
  }

  /** Makes {@link PlainServer}s for Sasl.createSaslServer (found through {@link PlainProvider}). */
  public static final class PlainFactory implements SaslServerFactory {
    @Override
    public SaslServer createSaslServer(
        String mechanism, String protocol, String serverName, Map<String, ?> props, CallbackHandler cbh) {
      return "PLAIN".equals(mechanism) ? new PlainServer(cbh) : null;
    }

    @Override
    public String[] getMechanismNames(Map<String, ?> props) {
      return new String[] {"PLAIN"};
    }
  }

  static final class PlainProvider extends Provider {
    PlainProvider() {
      super("HivewireTestPlain", "1.0", "PLAIN SASL server for hivewire's tests");
      put("SaslServerFactory.PLAIN", PlainFactory.class.getName());
    }
  }
}
