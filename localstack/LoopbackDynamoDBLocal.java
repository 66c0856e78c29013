import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Starts DynamoDB Local listening on 127.0.0.1 only. DynamoDB Local has no bind
 * option and listens on every interface; this launcher builds the same server from
 * the same command line (so -disableTelemetry applies) and binds its connector to
 * the loopback address before starting it. Run as a single source file:
 * java -cp 'DynamoDBLocal.jar:DynamoDBLocal_lib/*' LoopbackDynamoDBLocal.java -inMemory -disableTelemetry -port N
 */
public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        for (Connector connector : server.getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        proxy.start();
    }
}
