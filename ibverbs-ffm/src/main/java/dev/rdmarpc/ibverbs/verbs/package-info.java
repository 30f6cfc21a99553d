/**
 * RDMA verbs for Java: the layer over the generated libibverbs bindings that applications and the
 * RDMA transport use. It costs what C costs on the data path: posting and polling go through
 * reusable native flyweights and allocate nothing on the Java heap.
 *
 * <h2>Resources and ownership</h2>
 * <pre>
 * Context (an opened device)                     Verbs.devices(), Context.open(name)
 *  +- ProtectionDomain                           ctx.allocateProtectionDomain()
 *  |   +- MemoryRegion                           pd.register(segment, access)
 *  |   +- MemoryWindow (type 2, bound by work requests)  pd.allocateMemoryWindow()
 *  |   +- SharedReceiveQueue                     pd.createSharedReceiveQueue(...)
 *  |   +- QueuePair  (also depends on its CQs and SRQ)  pd.createQueuePair(new QueuePairInit()...)
 *  +- CompletionChannel                          ctx.createCompletionChannel()
 *  +- CompletionQueue (depends on its channel)   ctx.createCompletionQueue(n, channel, vector)
 *  +- AsyncEventMonitor                          ctx.startAsyncEvents(listener)
 * </pre>
 * Every resource ({@link dev.rdmarpc.ibverbs.verbs.VerbsResource}) is {@code AutoCloseable}, closes its
 * native object exactly once, and <b>refuses</b> to close while resources that depend on it are open
 * ({@link java.lang.IllegalStateException}); close in reverse order of creation, as
 * try-with-resources does. Live objects are counted per kind in
 * {@link dev.rdmarpc.ibverbs.verbs.VerbsResources}. The reusable native buffers
 * ({@link dev.rdmarpc.ibverbs.verbs.WorkCompletions}, {@link dev.rdmarpc.ibverbs.verbs.SendWorkRequests},
 * {@link dev.rdmarpc.ibverbs.verbs.ReceiveWorkRequests}) are owned by whoever creates them.
 *
 * <h2>A connection, end to end</h2>
 * {@snippet :
 * try (Context ctx = Context.open("rxe0");
 *      ProtectionDomain pd = ctx.allocateProtectionDomain();
 *      CompletionQueue cq = ctx.createCompletionQueue(256);
 *      Arena arena = Arena.ofShared();
 *      MemoryRegion mr = pd.register(arena.allocate(1 << 20), Access.LOCAL_REMOTE_READ_WRITE);
 *      QueuePair qp = pd.createQueuePair(new QueuePairInit().completionQueue(cq));
 *      SendWorkRequests sends = new SendWorkRequests(16, 1);
 *      WorkCompletions wc = new WorkCompletions(16)) {
 *     int gidIndex = ctx.gidFor(1, InetAddress.getByName("198.18.0.1")).index();
 *     QpEndpoint mine = qp.endpoint(1, gidIndex, 0x1234);
 *     QpEndpoint theirs = exchange(mine);          // out of band
 *     qp.connect(new ConnectionAttributes().remote(theirs).localPsn(mine.psn()).sgidIndex(gidIndex));
 *     sends.get(0).clear().wrId(1).send(mr, 0, 64).signaled(true);
 *     qp.postSend(sends, 1);
 *     while (cq.poll(wc, 16) == 0) { }
 * }
 * }
 *
 * <h2>Errors</h2>
 * Native failures throw {@link dev.rdmarpc.ibverbs.VerbsException} with the operation and errno text;
 * using a closed resource throws {@link java.lang.IllegalStateException}; a full queue is not an
 * exception but the errno value {@code postSend}/{@code postReceive} return. Completion statuses are
 * {@link dev.rdmarpc.ibverbs.verbs.WcStatus} with libibverbs' own text.
 */
package dev.rdmarpc.ibverbs.verbs;
