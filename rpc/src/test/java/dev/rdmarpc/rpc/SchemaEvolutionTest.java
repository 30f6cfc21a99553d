package dev.rdmarpc.rpc;

import static org.junit.jupiter.api.Assertions.*;

import dev.rdmarpc.rpc.codec.Codec;
import dev.rdmarpc.rpc.codec.Codecs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Records that evolve (docs/protocol.md, "Records that evolve"): an older and a newer definition of
 * the same record, where the newer one gained components at its end, read each other's encodings,
 * first codec against codec, then as the request and response of one method served and called over
 * TCP loopback by peers that disagree on the definition.
 */
@Timeout(30)
class SchemaEvolutionTest {
    enum Level { LOW, HIGH }

    /** {@link Level} with a constant added at its end. */
    enum LevelV2 { LOW, HIGH, URGENT }

    record InnerV1(int a, String b) {
    }

    /** {@link InnerV1} with two components added. */
    record InnerV2(int a, String b, long c, Level d) {
    }

    /** The nested record sits in the middle, so an older decoder must skip its newer bytes to go on. */
    record V1(long id, InnerV1 inner, String name, Level level) {
    }

    /** {@link V1} with a component of every supported kind added at its end; its nested record grew too. */
    record V2(long id, InnerV2 inner, String name, LevelV2 level,
              boolean z, byte b, short s, char c, int i, long l, float f, double d,
              String str, byte[] bytes, MemorySegment seg, Level e, InnerV2 more) {
    }

    /** A list: every node is a nested record of the same type. */
    record NodeV1(int value, NodeV1 next) {
    }

    record NodeV2(int value, NodeV2 next, String tag) {
    }

    record Empty() {
    }

    record Grown(int a, String b, Level c) {
    }

    static final Codec<V1> C1 = Codecs.record(MethodHandles.lookup(), V1.class);
    static final Codec<V2> C2 = Codecs.record(MethodHandles.lookup(), V2.class);

    static final V1 OLD = new V1(7, new InnerV1(3, "x"), "héllo", Level.HIGH);

    static V2 newer(String name, LevelV2 level) {
        return newer(7, name, level);
    }

    static V2 newer(long id, String name, LevelV2 level) {
        return new V2(id, new InnerV2(3, "x", 99L, Level.HIGH), name, level,
                true, (byte) -5, (short) 300, 'λ', -42, Long.MAX_VALUE, 1.5f, -2.25,
                "neu", new byte[]{1, 2, 3}, MemorySegment.ofArray(new byte[]{4, 5}), Level.LOW,
                new InnerV2(8, "more", 9L, Level.LOW));
    }

    private static <T> MemorySegment encode(Codec<T> codec, T value) {
        MemorySegment seg = MemorySegment.ofArray(new byte[codec.encodedSize(value)]);
        codec.encode(value, seg, 0);
        return seg;
    }

    private static <A, B> B reencode(Codec<A> from, A value, Codec<B> to) {
        MemorySegment seg = encode(from, value);
        return to.decode(seg, 0, (int) seg.byteSize());
    }

    /** Every component V2 added has its default, as decoded from an encoding that lacks it. */
    private static void assertNewComponentsDefault(V2 v) {
        assertFalse(v.z());
        assertEquals((byte) 0, v.b());
        assertEquals((short) 0, v.s());
        assertEquals('\0', v.c());
        assertEquals(0, v.i());
        assertEquals(0L, v.l());
        assertEquals(0f, v.f()); // +0.0 (bitwise)
        assertEquals(0d, v.d());
        assertNull(v.str());
        assertNull(v.bytes());
        assertNull(v.seg());
        assertNull(v.e());
        assertNull(v.more());
    }

    // ---- codec against codec ----

    @Test
    void aNewerDecoderGivesAbsentComponentsTheirDefaults() {
        V2 v = reencode(C1, OLD, C2);
        assertEquals(7, v.id());
        assertEquals(new InnerV2(3, "x", 0L, null), v.inner(), "the nested record's new components default too");
        assertEquals("héllo", v.name());
        assertEquals(LevelV2.HIGH, v.level());
        assertNewComponentsDefault(v);

        V2 nullInner = reencode(C1, new V1(1, null, null, null), C2);
        assertNull(nullInner.inner());
        assertNull(nullInner.name());
        assertNull(nullInner.level());
        assertNewComponentsDefault(nullInner);
    }

    @Test
    void anOlderDecoderIgnoresTheNewerComponents() {
        V2 full = newer("héllo", LevelV2.HIGH);
        MemorySegment bytes = encode(C2, full);
        assertTrue(bytes.byteSize() > encode(C1, OLD).byteSize(), "the newer encoding is longer");
        assertEquals(OLD, C1.decode(bytes, 0, (int) bytes.byteSize()),
                "the nested record's newer bytes are skipped, and what follows it is read in place");
        // And back: what survives the older peer is what it knew; the rest is default again.
        V2 back = reencode(C1, C1.decode(bytes, 0, (int) bytes.byteSize()), C2);
        assertEquals(new InnerV2(3, "x", 0L, null), back.inner());
        assertNewComponentsDefault(back);
    }

    @Test
    void aListOfNestedRecordsEvolvesAtEveryNode() {
        Codec<NodeV1> n1 = Codecs.record(MethodHandles.lookup(), NodeV1.class);
        Codec<NodeV2> n2 = Codecs.record(MethodHandles.lookup(), NodeV2.class);
        NodeV2 list2 = new NodeV2(1, new NodeV2(2, new NodeV2(3, null, "c"), "b"), "a");
        assertEquals(new NodeV1(1, new NodeV1(2, new NodeV1(3, null))), reencode(n2, list2, n1));
        NodeV1 list1 = new NodeV1(1, new NodeV1(2, new NodeV1(3, null)));
        assertEquals(new NodeV2(1, new NodeV2(2, new NodeV2(3, null, null), null), null), reencode(n1, list1, n2));
    }

    @Test
    void aRecordWithoutComponentsMayGainSome() {
        Codec<Empty> e = Codecs.record(MethodHandles.lookup(), Empty.class);
        Codec<Grown> g = Codecs.record(MethodHandles.lookup(), Grown.class);
        assertEquals(0, e.encodedSize(new Empty()));
        assertEquals(new Grown(0, null, null), reencode(e, new Empty(), g));
        assertEquals(new Empty(), reencode(g, new Grown(5, "five", Level.HIGH), e));
    }

    @Test
    void aPayloadCutInsideAComponentIsMalformedAndNamesIt() {
        MemorySegment full = encode(C1, OLD);
        String[] names = {"id", "inner", "name", "level"};
        long[] starts = {0, 8, 8 + 4 + 9, 8 + 4 + 9 + 4 + 6, 8 + 4 + 9 + 4 + 6 + 4}; // "héllo" is 6 bytes
        assertEquals(starts[4], full.byteSize());
        int decoded = 0;
        for (int cut = 0; cut <= full.byteSize(); cut++) {
            int k = 0;
            while (starts[k + 1] <= cut && k < 3) {
                k++;
            }
            final int len = cut;
            if (cut == starts[k] || cut == full.byteSize()) {
                // At a component boundary: an older definition that ended here.
                V1 v = C1.decode(full, 0, len);
                int present = cut == full.byteSize() ? 4 : k;
                assertEquals(new V1(present > 0 ? 7 : 0, present > 1 ? OLD.inner() : null,
                        present > 2 ? OLD.name() : null, present > 3 ? OLD.level() : null), v, "cut at " + cut);
                decoded++;
            } else {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> C1.decode(full, 0, len),
                        "cut at " + cut);
                assertTrue(e.getMessage().startsWith("truncated record field V1." + names[k] + ":"),
                        "cut at " + cut + ": " + e.getMessage());
            }
        }
        assertEquals(5, decoded, "decodes only at the five boundaries");

        // A nested record whose own length ends inside one of its components: named at its level.
        MemorySegment bad = MemorySegment.ofArray(new byte[26]);
        bad.set(Codecs.LONG_LE, 0, 7L);
        bad.set(Codecs.INT_LE, 8, 6);     // inner: 6 bytes, a (4) and half of b's length
        bad.set(Codecs.INT_LE, 12, 3);
        bad.set(Codecs.INT_LE, 18, -1);   // name null
        bad.set(Codecs.INT_LE, 22, 0);    // level LOW
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> C1.decode(bad, 0, 26));
        assertEquals("truncated record field InnerV1.b: 2 of its 4 bytes", e.getMessage());
        // The same with the nested length at 4: b is absent, not malformed.
        bad.set(Codecs.INT_LE, 8, 4);
        MemorySegment fixedUp = MemorySegment.ofArray(new byte[24]);
        MemorySegment.copy(bad, 0, fixedUp, 0, 16);
        MemorySegment.copy(bad, 18, fixedUp, 16, 8);
        assertEquals(new V1(7, new InnerV1(3, null), null, Level.LOW), C1.decode(fixedUp, 0, 24));
    }

    @Test
    void anEnumConstantTheDecoderDoesNotKnowIsAClearError() {
        assertEquals(OLD, reencode(C2, newer("héllo", LevelV2.HIGH), C1), "known constants keep their ordinals");
        MemorySegment urgent = encode(C2, newer("héllo", LevelV2.URGENT));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> C1.decode(urgent, 0, (int) urgent.byteSize()));
        assertTrue(e.getMessage().contains("record field V1.level: enum " + Level.class.getName()
                + " has no constant of ordinal 2 (it has 2"), e.getMessage());
        // A negative ordinal other than -1 (null) is malformed, not newer.
        MemorySegment neg = encode(C1, OLD);
        neg.set(Codecs.INT_LE, neg.byteSize() - 4, -3);
        e = assertThrows(IllegalArgumentException.class, () -> C1.decode(neg, 0, (int) neg.byteSize()));
        assertEquals("record field V1.level: bad enum ordinal -3", e.getMessage());
    }

    // ---- a server and a client that disagree on the definition ----

    static final Method<V1, V1> EVOLVE_V1 = Method.of("evolve", C1, C1);
    static final Method<V2, V2> EVOLVE_V2 = Method.of("evolve", C2, C2);

    static RpcServer oldServer;
    static RpcServer newServer;
    static RpcClient toOld;
    static RpcClient toNew;
    static final AtomicReference<V1> seenByOld = new AtomicReference<>();
    static final AtomicReference<V2> seenByNew = new AtomicReference<>();
    static final AtomicReference<String> newSegSeen = new AtomicReference<>();

    @BeforeAll
    static void start() {
        oldServer = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(EVOLVE_V1, (ctx, r) -> {
                    seenByOld.set(r);
                    return new V1(r.id() + 1, r.inner(), r.name() + "!", r.level());
                })
                .start();
        newServer = RpcServer.builder().bind(new InetSocketAddress("127.0.0.1", 0)).tcp(cfg -> cfg.loop(l -> l.ioThreads(1)))
                .register(EVOLVE_V2, (ctx, r) -> {
                    seenByNew.set(r);
                    newSegSeen.set(r.seg() == null ? null : Arrays.toString(r.seg().toArray(ValueLayout.JAVA_BYTE)));
                    return newer(r.id() + 1, r.name() + "!", "escalate".equals(r.name()) ? LevelV2.URGENT : r.level());
                })
                .start();
        toOld = RpcClient.connect(oldServer.address());
        toNew = RpcClient.connect(newServer.address());
    }

    @AfterAll
    static void stop() {
        toOld.close();
        toNew.close();
        oldServer.close();
        newServer.close();
    }

    @Test
    void aNewerClientCallsAnOlderServer() {
        V2 response = toOld.call(EVOLVE_V2, newer("héllo", LevelV2.HIGH));
        assertEquals(OLD, seenByOld.get(), "the older server drops what it does not know");
        assertEquals(8, response.id());
        assertEquals(new InnerV2(3, "x", 0L, null), response.inner());
        assertEquals("héllo!", response.name());
        assertEquals(LevelV2.HIGH, response.level());
        assertNewComponentsDefault(response);
    }

    @Test
    void anOlderClientCallsANewerServer() {
        V1 response = toNew.call(EVOLVE_V1, OLD);
        V2 seen = seenByNew.get();
        assertEquals(7, seen.id());
        assertEquals(new InnerV2(3, "x", 0L, null), seen.inner());
        assertEquals("héllo", seen.name());
        assertEquals(LevelV2.HIGH, seen.level());
        assertNewComponentsDefault(seen);
        assertNull(newSegSeen.get());
        assertEquals(new V1(8, new InnerV1(3, "x"), "héllo!", Level.HIGH), response,
                "the older client drops what it does not know");
    }

    @Test
    void theSameDefinitionOnBothSidesStillCarriesEverything() {
        V2 response = toNew.call(EVOLVE_V2, newer("héllo", LevelV2.HIGH));
        assertEquals("[4, 5]", newSegSeen.get());
        assertEquals(new InnerV2(8, "more", 9L, Level.LOW), response.more());
        assertArrayEquals(new byte[]{4, 5}, response.seg().toArray(ValueLayout.JAVA_BYTE));
        assertEquals('λ', response.c());
        assertEquals(Long.MAX_VALUE, response.l());
    }

    @Test
    void aConstantTheOtherSideDoesNotKnowFailsThatCallWithProtocolError() {
        RpcException e = assertThrows(RpcException.class, () -> toOld.call(EVOLVE_V2, newer("héllo", LevelV2.URGENT)));
        assertEquals(Status.PROTOCOL_ERROR, e.status(), e::toString);
        assertTrue(e.getMessage().contains("has no constant of ordinal 2"), e.getMessage());
        e = assertThrows(RpcException.class, () -> toNew.call(EVOLVE_V1, new V1(1, null, "escalate", Level.LOW)));
        assertEquals(Status.PROTOCOL_ERROR, e.status(), e::toString);
        assertTrue(e.getMessage().startsWith("response of evolve could not be decoded"), e.getMessage());
        assertTrue(e.getMessage().contains("has no constant of ordinal 2"), e.getMessage());
        // Only those calls failed.
        assertEquals(OLD.name() + "!", toOld.call(EVOLVE_V2, newer("héllo", LevelV2.LOW)).name());
        assertEquals("héllo!", toNew.call(EVOLVE_V1, OLD).name());
    }
}
