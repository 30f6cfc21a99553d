package dev.rdmarpc.examples.greeter;

import dev.rdmarpc.examples.greeter.proto.GreeterGrpc;
import dev.rdmarpc.examples.greeter.proto.HelloReply;
import dev.rdmarpc.examples.greeter.proto.HelloRequest;
import io.grpc.stub.StreamObserver;

/** The service, as any grpc-java service is written: nothing in it knows the transport. */
public final class GreeterService extends GreeterGrpc.GreeterImplBase {
    @Override
    public void sayHello(HelloRequest request, StreamObserver<HelloReply> responses) {
        responses.onNext(HelloReply.newBuilder().setMessage("hello " + request.getName()).build());
        responses.onCompleted();
    }

    @Override
    public void sayHelloRepeatedly(HelloRequest request, StreamObserver<HelloReply> responses) {
        for (int i = 1; i <= request.getCount(); i++) {
            responses.onNext(HelloReply.newBuilder().setMessage("hello " + request.getName() + " #" + i).build());
        }
        responses.onCompleted();
    }
}
