package dev.rdmarpc.rpc.service;

import dev.rdmarpc.rpc.CallOptions;
import dev.rdmarpc.rpc.Method;
import dev.rdmarpc.rpc.RpcChannel;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The client class of a service, generated at run time: a hidden class in the package of the
 * caller's lookup class that implements the interface, one method per RPC method, each of them the
 * typed call written out, with nothing in between:
 * {@snippet :
 * final class Greeter$$RpcClient implements Greeter {       // hidden: no name code can use
 *     private final RpcChannel channel;
 *     private final Method m0, m1;                          // the ServiceMethods' wire methods
 *     private final Streaming m2;                           // a streaming method, bound to the channel
 *     private final String description;
 *
 *     public String hello(String request) { return (String) channel.call(m0, request, CallOptions.DEFAULT); }
 *     public CompletableFuture<Integer> count(String request, CallOptions options) {
 *         return channel.callAsync(m1, request, options);
 *     }
 *     public Streaming chat() { return m2; }
 *     public String toString() { return description; }
 * }
 * }
 * A primitive request is boxed ({@code Integer.valueOf}) and a primitive response unboxed, as the
 * typed call's caller does. Default methods are inherited from the interface, {@code equals} and
 * {@code hashCode} from {@code Object}.
 *
 * <p>The code is straight-line (no branch, no handler), so it needs no stack map frames; the class
 * file writer below knows just the constant pool entries and instructions that this needs. A hidden
 * class defined through the caller's lookup has the access the caller's own code has: it can name
 * what the caller can name, and its class loader sees what the caller's sees.
 */
final class ClientClass {
    private static final int VERSION = 61; // Java 17: every JDK this runs on reads it
    private static final String CHANNEL = internal(RpcChannel.class);
    private static final String METHOD = internal(Method.class);
    private static final String STREAMING = internal(Streaming.class);
    private static final String CALL_DESC = "(L" + METHOD + ";Ljava/lang/Object;L" + internal(CallOptions.class) + ";)";
    private static final String OPTIONS_DESC = CallOptions.class.descriptorString();
    private static final MethodType CONSTRUCTOR = MethodType.methodType(void.class, RpcChannel.class, Method[].class,
            Streaming[].class, String.class);

    private ClientClass() {
    }

    /**
     * Defines the client class of {@code service} in its lookup's package.
     *
     * @return its constructor, {@code (RpcChannel, Method[], Streaming[], String)Object}: the channel, the
     *         wire methods of the unary methods and the bound {@link Streaming}s of the streaming ones, both
     *         indexed as {@link ServiceDescriptor#methods()} (null where the method is of the other kind),
     *         what {@code toString} answers
     * @throws IllegalArgumentException when the lookup cannot define it, saying why
     */
    static MethodHandle define(ServiceDescriptor<?> service) {
        MethodHandles.Lookup lookup = service.codecs().lookup();
        Class<?> type = service.type();
        if (!lookup.hasFullPrivilegeAccess()) {
            throw new IllegalArgumentException("a service client is a class defined through the lookup, which needs full"
                    + " privilege access: pass MethodHandles.lookup(), not " + lookup);
        }
        try {
            lookup.accessClass(type);
            for (ServiceMethod m : service.methods()) {
                Class<?> r = m.javaMethod().getReturnType();
                if (!r.isPrimitive()) {
                    lookup.accessClass(r);
                }
            }
        } catch (IllegalAccessException e) {
            throw new IllegalArgumentException("the lookup " + lookup + " cannot reach " + e.getMessage()
                    + ": pass MethodHandles.lookup() from code that can name the interface and its types", e);
        }
        String pkg = lookup.lookupClass().getPackageName();
        String name = (pkg.isEmpty() ? "" : pkg.replace('.', '/') + "/") + type.getSimpleName() + "$$RpcClient";
        byte[] bytes = new ClientClass.Writer(name, service).write();
        try {
            MethodHandles.Lookup hidden = lookup.defineHiddenClass(bytes, true);
            return hidden.findConstructor(hidden.lookupClass(), CONSTRUCTOR)
                    .asType(CONSTRUCTOR.changeReturnType(Object.class));
        } catch (IllegalAccessException | NoSuchMethodException | LinkageError e) {
            throw new IllegalArgumentException("cannot define the client class of " + type.getName() + " through "
                    + lookup + ": " + e, e);
        }
    }

    static String internal(Class<?> c) {
        return c.isArray() ? c.descriptorString() : c.getName().replace('.', '/');
    }

    /** Writes the class file. */
    private static final class Writer {
        private static final int ACC_PUBLIC = 0x0001;
        private static final int ACC_PRIVATE = 0x0002;
        private static final int ACC_FINAL = 0x0010;
        private static final int ACC_SUPER = 0x0020;
        private static final int ACC_SYNTHETIC = 0x1000;

        private final String name;
        private final ServiceDescriptor<?> service;
        private final ByteArrayOutputStream poolBytes = new ByteArrayOutputStream();
        private final DataOutputStream pool = new DataOutputStream(poolBytes);
        private final Map<String, Integer> entries = new HashMap<>();
        private int poolCount = 1;

        Writer(String name, ServiceDescriptor<?> service) {
            this.name = name;
            this.service = service;
        }

        byte[] write() {
            try {
                return writeClass();
            } catch (IOException e) {
                throw new UncheckedIOException(e); // cannot happen: in memory
            }
        }

        private byte[] writeClass() throws IOException {
            List<ServiceMethod> methods = service.methods();
            int thisClass = classRef(name);
            int superClass = classRef("java/lang/Object");
            int iface = classRef(internal(service.type()));
            List<byte[]> fields = new ArrayList<>();
            fields.add(field("channel", "L" + CHANNEL + ";"));
            for (int i = 0; i < methods.size(); i++) {
                fields.add(field("m" + i, fieldDescriptor(methods.get(i))));
            }
            fields.add(field("description", "Ljava/lang/String;"));
            List<byte[]> code = new ArrayList<>();
            code.add(constructor(methods));
            code.add(toStringMethod());
            for (int i = 0; i < methods.size(); i++) {
                ServiceMethod m = methods.get(i);
                code.add(m.kind() == ServiceMethod.Kind.STREAM ? streamingMethod(i, m) : rpcMethod(i, m));
            }

            ByteArrayOutputStream out = new ByteArrayOutputStream();
            DataOutputStream d = new DataOutputStream(out);
            d.writeInt(0xCAFEBABE);
            d.writeShort(0);
            d.writeShort(VERSION);
            d.writeShort(poolCount);
            d.write(poolBytes.toByteArray());
            d.writeShort(ACC_FINAL | ACC_SUPER | ACC_SYNTHETIC);
            d.writeShort(thisClass);
            d.writeShort(superClass);
            d.writeShort(1);
            d.writeShort(iface);
            d.writeShort(fields.size());
            for (byte[] f : fields) {
                d.write(f);
            }
            d.writeShort(code.size());
            for (byte[] m : code) {
                d.write(m);
            }
            d.writeShort(0); // no class attributes
            return out.toByteArray();
        }

        /** Field {@code m<i>}: the wire {@code Method} of a unary method, the bound {@code Streaming} of a streaming one. */
        private static String fieldDescriptor(ServiceMethod m) {
            return "L" + (m.kind() == ServiceMethod.Kind.STREAM ? STREAMING : METHOD) + ";";
        }

        /**
         * {@code <init>(RpcChannel, Method[], Streaming[], String)}: stores the channel, each method's
         * {@code Method} or {@code Streaming}, the description.
         */
        private byte[] constructor(List<ServiceMethod> methods) throws IOException {
            Code c = new Code();
            c.op(0x2A); // aload_0
            c.op(0xB7).u2(methodRef("java/lang/Object", "<init>", "()V")); // invokespecial
            c.op(0x2A).op(0x2B); // aload_0, aload_1
            c.op(0xB5).u2(fieldRef("channel", "L" + CHANNEL + ";")); // putfield
            for (int i = 0; i < methods.size(); i++) {
                boolean stream = methods.get(i).kind() == ServiceMethod.Kind.STREAM;
                c.op(0x2A).op(stream ? 0x2D : 0x2C); // aload_0, aload_3 (Streaming[]) or aload_2 (Method[])
                c.intConstant(i);
                c.op(0x32); // aaload
                c.op(0xB5).u2(fieldRef("m" + i, fieldDescriptor(methods.get(i))));
            }
            c.op(0x2A).op(0x19).u1(4); // aload_0, aload 4
            c.op(0xB5).u2(fieldRef("description", "Ljava/lang/String;"));
            c.op(0xB1); // return
            return method(ACC_PUBLIC, "<init>", CONSTRUCTOR.toMethodDescriptorString(), c, 3, 5);
        }

        private byte[] toStringMethod() throws IOException {
            Code c = new Code();
            c.op(0x2A).op(0xB4).u2(fieldRef("description", "Ljava/lang/String;")).op(0xB0); // getfield; areturn
            return method(ACC_PUBLIC, "toString", "()Ljava/lang/String;", c, 1, 1);
        }

        /** A streaming method: {@code return m<i>}, the Streaming bound when the client was made. */
        private byte[] streamingMethod(int index, ServiceMethod m) throws IOException {
            Code c = new Code();
            c.op(0x2A).op(0xB4).u2(fieldRef("m" + index, "L" + STREAMING + ";")).op(0xB0); // aload_0; getfield; areturn
            return method(ACC_PUBLIC | ACC_FINAL, m.javaMethod().getName(), "()L" + STREAMING + ";", c, 1, 1);
        }

        /** One RPC method: {@code return (R) channel.call(m<i>, request, options)}. */
        private byte[] rpcMethod(int index, ServiceMethod m) throws IOException {
            java.lang.reflect.Method jm = m.javaMethod();
            Class<?>[] params = jm.getParameterTypes();
            int[] slots = new int[params.length];
            int locals = 1;
            for (int i = 0; i < params.length; i++) {
                slots[i] = locals;
                locals += params[i] == long.class || params[i] == double.class ? 2 : 1;
            }
            Code c = new Code();
            c.op(0x2A).op(0xB4).u2(fieldRef("channel", "L" + CHANNEL + ";")); // aload_0; getfield
            c.op(0x2A).op(0xB4).u2(fieldRef("m" + index, "L" + METHOD + ";"));
            if (m.requestIndex < 0) {
                c.op(0x01); // aconst_null: a VOID request
            } else {
                Class<?> q = params[m.requestIndex];
                c.load(q, slots[m.requestIndex]);
                if (q.isPrimitive()) {
                    Class<?> box = MethodType.methodType(q).wrap().returnType();
                    c.op(0xB8).u2(methodRef(internal(box), "valueOf", MethodType.methodType(box, q).toMethodDescriptorString()));
                }
            }
            if (m.optionsIndex < 0) {
                c.op(0xB2).u2(fieldRef(internal(CallOptions.class), "DEFAULT", OPTIONS_DESC)); // getstatic
            } else {
                c.op(0x19).u1(slots[m.optionsIndex]); // aload
            }
            boolean async = m.kind() == ServiceMethod.Kind.UNARY_ASYNC;
            String callDesc = CALL_DESC + (async ? CompletableFuture.class.descriptorString() : "Ljava/lang/Object;");
            c.op(0xB9).u2(interfaceMethodRef(CHANNEL, async ? "callAsync" : "call", callDesc)).u1(4).u1(0); // invokeinterface
            Class<?> r = jm.getReturnType();
            if (r == void.class) {
                c.op(0x57).op(0xB1); // pop; return
            } else if (r.isPrimitive()) {
                Class<?> box = MethodType.methodType(r).wrap().returnType();
                c.op(0xC0).u2(classRef(internal(box))); // checkcast
                c.op(0xB6).u2(methodRef(internal(box), r.getName() + "Value", "()" + r.descriptorString())); // invokevirtual
                c.op(r == long.class ? 0xAD : r == float.class ? 0xAE : r == double.class ? 0xAF : 0xAC); // lreturn.. ireturn
            } else {
                if (r != Object.class) {
                    c.op(0xC0).u2(classRef(internal(r))); // checkcast
                }
                c.op(0xB0); // areturn
            }
            String desc = MethodType.methodType(r, params).toMethodDescriptorString();
            return method(ACC_PUBLIC | ACC_FINAL, jm.getName(), desc, c, 5, locals);
        }

        private byte[] field(String fieldName, String descriptor) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            DataOutputStream d = new DataOutputStream(out);
            d.writeShort(ACC_PRIVATE | ACC_FINAL);
            d.writeShort(utf8(fieldName));
            d.writeShort(utf8(descriptor));
            d.writeShort(0);
            return out.toByteArray();
        }

        private byte[] method(int access, String methodName, String descriptor, Code code, int maxStack, int maxLocals)
                throws IOException {
            byte[] bytecode = code.bytes.toByteArray();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            DataOutputStream d = new DataOutputStream(out);
            d.writeShort(access);
            d.writeShort(utf8(methodName));
            d.writeShort(utf8(descriptor));
            d.writeShort(1); // one attribute: Code
            d.writeShort(utf8("Code"));
            d.writeInt(2 + 2 + 4 + bytecode.length + 2 + 2);
            d.writeShort(maxStack);
            d.writeShort(maxLocals);
            d.writeInt(bytecode.length);
            d.write(bytecode);
            d.writeShort(0); // no exception table
            d.writeShort(0); // no attributes: straight-line code needs no StackMapTable
            return out.toByteArray();
        }

        private int utf8(String s) throws IOException {
            Integer i = entries.get("U" + s);
            if (i != null) {
                return i;
            }
            pool.writeByte(1);
            pool.writeUTF(s); // modified UTF-8 with its u2 length, as the class file wants
            return add("U" + s);
        }

        private int classRef(String internalName) throws IOException {
            return ref("C" + internalName, 7, utf8(internalName), -1);
        }

        private int nameAndType(String n, String descriptor) throws IOException {
            return ref("N" + n + ' ' + descriptor, 12, utf8(n), utf8(descriptor));
        }

        private int fieldRef(String fieldName, String descriptor) throws IOException {
            return fieldRef(name, fieldName, descriptor);
        }

        private int fieldRef(String owner, String fieldName, String descriptor) throws IOException {
            return ref("F" + owner + '.' + fieldName + ' ' + descriptor, 9, classRef(owner), nameAndType(fieldName, descriptor));
        }

        private int methodRef(String owner, String methodName, String descriptor) throws IOException {
            return ref("M" + owner + '.' + methodName + descriptor, 10, classRef(owner), nameAndType(methodName, descriptor));
        }

        private int interfaceMethodRef(String owner, String methodName, String descriptor) throws IOException {
            return ref("I" + owner + '.' + methodName + descriptor, 11, classRef(owner),
                    nameAndType(methodName, descriptor));
        }

        /** An entry of {@code tag} with one or two u2 indexes ({@code b} < 0: one). */
        private int ref(String key, int tag, int a, int b) throws IOException {
            Integer i = entries.get(key);
            if (i != null) {
                return i;
            }
            pool.writeByte(tag);
            pool.writeShort(a);
            if (b >= 0) {
                pool.writeShort(b);
            }
            return add(key);
        }

        private int add(String key) {
            if (poolCount == 0xFFFF) {
                throw new IllegalArgumentException(service.type().getName() + " has too many methods for one client class");
            }
            entries.put(key, poolCount);
            return poolCount++;
        }
    }

    /** A method's bytecode. */
    private static final class Code {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Code op(int opcode) {
            bytes.write(opcode);
            return this;
        }

        Code u1(int v) {
            bytes.write(v);
            return this;
        }

        Code u2(int v) {
            bytes.write(v >>> 8);
            bytes.write(v);
            return this;
        }

        void intConstant(int v) {
            if (v <= 5) {
                op(0x03 + v); // iconst_<v>
            } else if (v <= Byte.MAX_VALUE) {
                op(0x10).u1(v); // bipush
            } else {
                op(0x11).u2(v); // sipush (a service has far fewer than 32768 methods)
            }
        }

        /** Loads a parameter: iload, lload, fload, dload or aload, with the slot as operand. */
        void load(Class<?> type, int slot) {
            int opcode = type == long.class ? 0x16 : type == float.class ? 0x17 : type == double.class ? 0x18
                    : type.isPrimitive() ? 0x15 : 0x19;
            op(opcode).u1(slot);
        }
    }
}
