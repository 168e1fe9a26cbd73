// Apache RocketMQ 5.x's own remoting client pops, acks and renews through a Gantry broker, the calls
// Apache's proxy makes in local mode: MQClientAPIImpl.popMessageAsync (POP_MESSAGE), ackMessageAsync
// (ACK_MESSAGE), changeInvisibleTimeAsync (CHANGE_MESSAGE_INVISIBLETIME). The handles are the POP_CK
// properties processPopResponse builds from the broker's answer. Prints one line per step:
//   POP <queueId> <queueOffset> <reconsumeTimes>       each message of the first pops
//   ACK <queueId> <queueOffset> <status>               every message but those whose offset is a multiple of 3
//   ACK_AGAIN <status>                                  one acked handle again
//   CHANGE <status>                                     the first message not acked, made invisible for 60 s
//   REPOP <queueId> <queueOffset> <reconsumeTimes>      what comes again once the invisible time has passed
//   ACK_REPOP <status>, ACK_CHANGED <status>, ACK_OLD <status>
// Run as a single-file program on the client5 classpath:
//   java -cp <cp> PopRemoting.java <brokerAddr> <brokerName> <topic> <group> <messages> <invisibleMs>
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.PopCallback;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.impl.ClientRemotingProcessor;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ChangeInvisibleTimeRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;

public class PopRemoting {
    static String addr;
    static String brokerName;
    static String topic;
    static String group;
    static MQClientAPIImpl api;

    public static void main(String[] args) throws Exception {
        addr = args[0];
        brokerName = args[1];
        topic = args[2];
        group = args[3];
        int messages = Integer.parseInt(args[4]);
        long invisibleMs = Long.parseLong(args[5]);
        api = new MQClientAPIImpl(new NettyClientConfig(), new ClientRemotingProcessor(null), null, new ClientConfig());
        api.start();
        try {
            List<MessageExt> popped = new ArrayList<>();
            for (int i = 0; i < 50 && popped.size() < messages; i++) {
                popped.addAll(pop(invisibleMs));
            }
            for (MessageExt m : popped) {
                System.out.println("POP " + m.getQueueId() + " " + m.getQueueOffset() + " " + m.getReconsumeTimes());
            }
            MessageExt acked = null;
            MessageExt changed = null;
            for (MessageExt m : popped) {
                if (m.getQueueOffset() % 3 != 0) {
                    System.out.println("ACK " + m.getQueueId() + " " + m.getQueueOffset() + " " + ack(m, m.getProperty(MessageConst.PROPERTY_POP_CK)).getStatus());
                    acked = m;
                } else if (changed == null) {
                    changed = m;
                }
            }
            System.out.println("ACK_AGAIN " + ack(acked, acked.getProperty(MessageConst.PROPERTY_POP_CK)).getStatus());
            AckResult renewed = change(changed, 60_000);
            System.out.println("CHANGE " + renewed.getStatus());
            TimeUnit.MILLISECONDS.sleep(invisibleMs + 500);
            List<MessageExt> again = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                List<MessageExt> found = pop(60_000);
                if (found.isEmpty() && !again.isEmpty()) {
                    break;
                }
                again.addAll(found);
                if (found.isEmpty()) {
                    TimeUnit.MILLISECONDS.sleep(200);
                }
            }
            boolean allOk = true;
            for (MessageExt m : again) {
                System.out.println("REPOP " + m.getQueueId() + " " + m.getQueueOffset() + " " + m.getReconsumeTimes());
                allOk &= ack(m, m.getProperty(MessageConst.PROPERTY_POP_CK)).getStatus().toString().equals("OK");
            }
            System.out.println("ACK_REPOP " + (allOk ? "OK" : "FAILED"));
            System.out.println("ACK_CHANGED " + ack(changed, renewed.getExtraInfo()).getStatus());
            System.out.println("ACK_OLD " + ack(changed, changed.getProperty(MessageConst.PROPERTY_POP_CK)).getStatus());
        } finally {
            api.shutdown();
        }
        System.exit(0);
    }

    static List<MessageExt> pop(long invisibleMs) throws Exception {
        PopMessageRequestHeader header = new PopMessageRequestHeader();
        header.setConsumerGroup(group);
        header.setTopic(topic);
        header.setQueueId(-1);
        header.setMaxMsgNums(32);
        header.setInvisibleTime(invisibleMs);
        header.setPollTime(0);
        header.setBornTime(System.currentTimeMillis());
        header.setInitMode(0);
        header.setExpType("TAG");
        header.setExp("*");
        CompletableFuture<PopResult> result = new CompletableFuture<>();
        api.popMessageAsync(brokerName, addr, header, 10_000, new PopCallback() {
            public void onSuccess(PopResult popResult) {
                result.complete(popResult);
            }

            public void onException(Throwable e) {
                result.completeExceptionally(e);
            }
        });
        PopResult popResult = result.get(15, TimeUnit.SECONDS);
        return popResult.getPopStatus() == PopStatus.FOUND ? popResult.getMsgFoundList() : new ArrayList<>();
    }

    static AckResult ack(MessageExt m, String extraInfo) throws Exception {
        AckMessageRequestHeader header = new AckMessageRequestHeader();
        header.setConsumerGroup(group);
        header.setTopic(topic);
        header.setQueueId(m.getQueueId());
        header.setExtraInfo(extraInfo);
        header.setOffset(m.getQueueOffset());
        CompletableFuture<AckResult> result = new CompletableFuture<>();
        api.ackMessageAsync(addr, 10_000, callback(result), header);
        return result.get(15, TimeUnit.SECONDS);
    }

    static AckResult change(MessageExt m, long invisibleMs) throws Exception {
        ChangeInvisibleTimeRequestHeader header = new ChangeInvisibleTimeRequestHeader();
        header.setConsumerGroup(group);
        header.setTopic(topic);
        header.setQueueId(m.getQueueId());
        header.setExtraInfo(m.getProperty(MessageConst.PROPERTY_POP_CK));
        header.setOffset(m.getQueueOffset());
        header.setInvisibleTime(invisibleMs);
        CompletableFuture<AckResult> result = new CompletableFuture<>();
        api.changeInvisibleTimeAsync(brokerName, addr, header, 10_000, callback(result));
        return result.get(15, TimeUnit.SECONDS);
    }

    static AckCallback callback(CompletableFuture<AckResult> result) {
        return new AckCallback() {
            public void onSuccess(AckResult ackResult) {
                result.complete(ackResult);
            }

            public void onException(Throwable e) {
                result.completeExceptionally(e);
            }
        };
    }
}
