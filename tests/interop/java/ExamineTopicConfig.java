// Apache RocketMQ 5.x's own admin client reads one topic's config from every broker of its route
// (DefaultMQAdminExt.examineTopicConfig: GET_TOPIC_CONFIG, 351) and prints, one line per broker,
//   <brokerName> <TopicConfig.getTopicMessageType()> <the attribute map as key=value, comma-joined>
// Run as a single-file program on the apache5 classpath: java -cp <cp> ExamineTopicConfig.java <namesrv> <topic>
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public class ExamineTopicConfig {
    public static void main(String[] args) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt(5000);
        admin.setNamesrvAddr(args[0]);
        admin.setInstanceName("examine-topic-config-" + System.nanoTime());
        admin.start();
        try {
            TopicRouteData route = admin.examineTopicRouteInfo(args[1]);
            TreeMap<String, String> masters = new TreeMap<>();
            for (BrokerData data : route.getBrokerDatas()) {
                masters.put(data.getBrokerName(), data.selectBrokerAddr());
            }
            for (Map.Entry<String, String> master : masters.entrySet()) {
                TopicConfig config = admin.examineTopicConfig(master.getValue(), args[1]);
                StringBuilder attributes = new StringBuilder();
                for (Map.Entry<String, String> a : new TreeMap<>(config.getAttributes()).entrySet()) {
                    attributes.append(attributes.length() == 0 ? "" : ",").append(a.getKey()).append('=').append(a.getValue());
                }
                System.out.println(master.getKey() + " " + config.getTopicMessageType() + " " + attributes);
            }
        } finally {
            admin.shutdown();
        }
        System.exit(0);
    }
}
