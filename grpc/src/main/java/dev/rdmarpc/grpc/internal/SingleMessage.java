package dev.rdmarpc.grpc.internal;

import io.grpc.internal.StreamListener;
import java.io.InputStream;

/** Hands one received message to gRPC. */
final class SingleMessage implements StreamListener.MessageProducer {
    private InputStream message;

    SingleMessage(InputStream message) {
        this.message = message;
    }

    @Override
    public InputStream next() {
        InputStream m = message;
        message = null;
        return m;
    }
}
