// A standalone Java consumer for the truth harness: KafkaConsumer.assign() with a group.id, so it commits
// with the group's id but joins no group (Kafka's console consumer refuses --group with --partition).
//
// Run in source-file mode with the sandbox jars:
//   java -cp 'lib/*' Standalone.java <bootstrap> <group> <reset> <topic> <partition,...> [key=value ...]
// The library's own commit timing: enable.auto.commit=true (every auto.commit.interval.ms, 5 s by
// default) and the commit of the consumed positions on close. SIGTERM runs the shutdown hook, which wakes
// the consumer up and waits for the main thread to close it (the final commit); SIGKILL is a crash.
// key=value arguments are more consumer settings (group.protocol=consumer: the new AsyncKafkaConsumer).
//
// stdout: one line a record, as the console consumer prints it: Partition:P<TAB>Offset:O<TAB>VALUE
// stderr: the consumer's log, and the markers "Standalone assigned partitions: t-0, t-1" (after assign)
// and "Processed a total of N messages" (after close).
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class Standalone {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], group = args[1], reset = args[2], topic = args[3];
        List<TopicPartition> partitions = new ArrayList<>();
        for (String p : args[4].split(",")) partitions.add(new TopicPartition(topic, Integer.parseInt(p)));
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("enable.auto.commit", "true");
        props.put("auto.offset.reset", reset);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        for (int i = 5; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }

        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch closed = new CountDownLatch(1);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            running.set(false);
            consumer.wakeup();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "standalone-shutdown"));

        long processed = 0;
        try {
            consumer.assign(partitions);
            System.err.println("Standalone assigned partitions: " + String.join(", ",
                partitions.stream().map(TopicPartition::toString).toList()));
            System.err.flush();
            while (running.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String value = r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8);
                    System.out.println("Partition:" + r.partition() + "\tOffset:" + r.offset() + "\t" + value);
                    processed++;
                }
                System.out.flush();
            }
        } catch (WakeupException e) {
            // the shutdown hook: close below (the final auto commit of the consumed positions)
        } finally {
            try {
                consumer.close();
            } finally {
                System.err.println("Processed a total of " + processed + " messages");
                System.err.flush();
                closed.countDown();
            }
        }
    }
}
