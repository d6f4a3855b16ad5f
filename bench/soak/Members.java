// Consumer group members for bench/soak, many in one JVM: the Java client, classic or KIP-848 protocol.
//
// Run in source-file mode with the sandbox jars: java -cp 'lib/*' Members.java <bootstrap> <journal>
// Every record a member processed is appended to <journal> (flushed) before it commits: one JSON object a
// line, {"group","topic","partition","offset","payload","client","at"} (tests/truth/records.py's Read).
// Commands on stdin, one per line:
//   start <member-id> <group> <topic> <classic|consumer>   a member that polls and commits what it read
//                                                         (commitSync at most once a second)
//   stop <member-id>                                      closes it (leaves the group)
//   pause <member-id>                                     stops reading (still polls: stays in the group)
//   rewind <member-id> <n>                                commits (committed - n) on its first assigned
//                                                         partition and seeks there: an active member's rewind
// On stdin EOF every member closes and the JVM exits. Printed: "<member-id> <event> [details]".
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class Members {
    static Writer journal;

    static String quoted(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static void journal(String group, String client, ConsumerRecords<byte[], byte[]> records) throws java.io.IOException {
        StringBuilder b = new StringBuilder();
        double at = System.currentTimeMillis() / 1000.0;
        for (ConsumerRecord<byte[], byte[]> r : records) {
            String payload = r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8);
            b.append("{\"group\":").append(quoted(group)).append(",\"topic\":").append(quoted(r.topic()))
                .append(",\"partition\":").append(r.partition()).append(",\"offset\":").append(r.offset())
                .append(",\"payload\":").append(quoted(payload)).append(",\"client\":").append(quoted(client))
                .append(",\"at\":").append(at).append("}\n");
        }
        synchronized (Members.class) {
            journal.write(b.toString());
            journal.flush();
        }
    }

    static final class Member implements Runnable {
        final String id;
        final String group;
        final String client;
        final KafkaConsumer<byte[], byte[]> consumer;
        final String topic;
        final AtomicBoolean running = new AtomicBoolean(true);
        final Thread thread;

        final AtomicBoolean pause = new AtomicBoolean(false);
        boolean paused = false;
        final java.util.concurrent.ConcurrentLinkedQueue<Long> rewinds = new java.util.concurrent.ConcurrentLinkedQueue<>();

        Member(String id, String bootstrap, String group, String topic, String protocol) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("group.id", group);
            p.put("group.protocol", protocol);
            if (protocol.equals("classic")) p.put("session.timeout.ms", "10000");  // KIP-848: the broker's
            p.put("max.poll.interval.ms", "30000");
            p.put("enable.auto.commit", "false");
            p.put("auto.offset.reset", "earliest");
            p.put("key.deserializer", ByteArrayDeserializer.class.getName());
            p.put("value.deserializer", ByteArrayDeserializer.class.getName());
            this.id = id;
            this.group = group;
            this.client = "java-" + protocol;
            this.topic = topic;
            this.consumer = new KafkaConsumer<>(p);
            this.thread = new Thread(this, "member-" + id);
        }

        public void run() {
            long lastCommit = 0;
            boolean readSinceCommit = false;
            try {
                consumer.subscribe(List.of(topic));
                while (running.get()) {
                    if (pause.get() && !paused && !consumer.assignment().isEmpty()) {
                        consumer.pause(consumer.assignment());
                        paused = true;
                        System.out.println(id + " paused");
                    }
                    Long n = rewinds.poll();
                    if (n != null) rewind(n);
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                    long now = System.currentTimeMillis();
                    if (!records.isEmpty()) {
                        journal(group, client, records);
                        readSinceCommit = true;
                    }
                    if (readSinceCommit && now - lastCommit >= 1000) {
                        try {
                            consumer.commitSync(Duration.ofSeconds(10));
                            lastCommit = now;
                            readSinceCommit = false;
                        } catch (RuntimeException e) {
                            // a rebalance or a coordinator move: the next commit covers it
                            if (e instanceof WakeupException) throw e;
                        }
                    }
                }
            } catch (WakeupException e) {
                // stopping
            } catch (RuntimeException | java.io.IOException e) {
                System.out.println(id + " error " + e);
            } finally {
                try {
                    consumer.close(Duration.ofSeconds(10));
                } catch (RuntimeException e) {
                    System.out.println(id + " close-error " + e);
                }
                System.out.println(id + " stopped");
                System.out.flush();
            }
        }

        void rewind(long n) {
            var assigned = new java.util.TreeSet<org.apache.kafka.common.TopicPartition>(
                java.util.Comparator.comparingInt(org.apache.kafka.common.TopicPartition::partition));
            assigned.addAll(consumer.assignment());
            if (assigned.isEmpty()) {
                System.out.println(id + " rewind-failed nothing-assigned");
                return;
            }
            var tp = assigned.first();
            var committed = consumer.committed(java.util.Set.of(tp), Duration.ofSeconds(10)).get(tp);
            if (committed == null || committed.offset() < n) {
                System.out.println(id + " rewind-failed committed " + committed);
                return;
            }
            long target = committed.offset() - n;
            consumer.commitSync(Map.of(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(target)),
                Duration.ofSeconds(10));
            consumer.seek(tp, target);
            System.out.println(id + " rewound " + tp.topic() + " " + tp.partition() + " " + committed.offset() + " " + target);
        }

        void stop() throws InterruptedException {
            running.set(false);
            consumer.wakeup();
            thread.join(30_000);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        journal = new OutputStreamWriter(new FileOutputStream(args[1], true), StandardCharsets.UTF_8);
        Map<String, Member> members = new ConcurrentHashMap<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            if (w.length == 5 && w[0].equals("start") && !members.containsKey(w[1])) {
                try {
                    Member m = new Member(w[1], bootstrap, w[2], w[3], w[4]);
                    members.put(w[1], m);
                    m.thread.start();
                    System.out.println(w[1] + " started");
                } catch (RuntimeException e) {
                    System.out.println(w[1] + " start-failed " + e);
                }
            } else if (w.length == 2 && w[0].equals("pause") && members.containsKey(w[1])) {
                members.get(w[1]).pause.set(true);
            } else if (w.length == 3 && w[0].equals("rewind") && members.containsKey(w[1])) {
                members.get(w[1]).rewinds.add(Long.parseLong(w[2]));
            } else if (w.length == 2 && w[0].equals("stop")) {
                Member m = members.remove(w[1]);
                if (m != null) m.stop();
            } else if (!line.isBlank()) {
                System.out.println("- unknown " + line);
            }
            System.out.flush();
        }
        for (Member m : members.values()) m.stop();
        System.exit(0);
    }
}
