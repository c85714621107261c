// A JDK host (com.sun.net.httpserver, no libraries), routing as hand-written
// Java services do: on the decoded path, getRequestURI().getPath(). Run as
// `java Host.java` (JDK 11+); it listens on PORT (0: any) and answers
// GET /_count with what it received.
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class Host {
    static final AtomicLong total = new AtomicLong();
    static final Map<String, Long> routes = new TreeMap<>();
    static final Pattern USER = Pattern.compile("^/api/users/([^/]+)$");

    static synchronized void hit(String route) {
        routes.merge(route, 1L, Long::sum);
    }

    static synchronized String counts() {
        StringBuilder b = new StringBuilder("{\"total\":" + total.get() + ",\"routes\":{");
        String sep = "";
        for (Map.Entry<String, Long> e : routes.entrySet()) {
            b.append(sep).append(quote(e.getKey())).append(':').append(e.getValue());
            sep = ",";
        }
        return b.append("}}").toString();
    }

    static String quote(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static void send(HttpExchange ex, int status, String json) throws IOException {
        byte[] out = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("X-Host", "java");
        ex.sendResponseHeaders(status, out.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(out);
        }
    }

    static String echo(HttpExchange ex, String route, byte[] body) throws Exception {
        String sha = "";
        for (byte b : MessageDigest.getInstance("SHA-256").digest(body)) sha += String.format("%02x", b);
        return "{\"host\":\"java\",\"route\":" + quote(route)
            + ",\"method\":" + quote(ex.getRequestMethod())
            + ",\"url\":" + quote(ex.getRequestURI().getRawPath())
            + ",\"rawLength\":" + body.length
            + ",\"rawSha256\":" + quote(sha)
            + ",\"headers\":{\"x-forwarded-for\":" + quote(ex.getRequestHeaders().getFirst("X-Forwarded-For"))
            + ",\"host\":" + quote(ex.getRequestHeaders().getFirst("Host")) + "}}";
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "0"));
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 128);
        server.createContext("/", ex -> {
            try {
                String path = ex.getRequestURI().getPath(); // decoded: %2F is a slash here
                String method = ex.getRequestMethod();
                byte[] body = ex.getRequestBody().readAllBytes();
                if (path.equals("/_count")) {
                    send(ex, 200, counts());
                    return;
                }
                total.incrementAndGet();
                Matcher m = USER.matcher(path);
                if (method.equalsIgnoreCase("POST") && path.equals("/api/users")) {
                    hit("POST /api/users");
                    send(ex, 201, echo(ex, "POST /api/users", body));
                } else if (method.equalsIgnoreCase("PUT") && m.matches()) {
                    hit("PUT /api/users/:id");
                    send(ex, 200, echo(ex, "PUT /api/users/:id", body));
                } else if (method.equalsIgnoreCase("POST") && path.equals("/orders")) {
                    hit("POST /orders");
                    send(ex, 201, "{\"ok\":true}");
                } else {
                    send(ex, 404, "{\"error\":\"not found\"}");
                }
            } catch (Exception e) {
                send(ex, 500, "{\"error\":" + quote(e.toString()) + "}");
            } finally {
                ex.close();
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(8));
        server.start();
        System.out.println("LISTENING " + server.getAddress().getPort());
        System.out.flush();
    }
}
