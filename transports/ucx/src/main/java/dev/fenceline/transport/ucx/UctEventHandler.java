package dev.fenceline.transport.ucx;

import org.agrona.DirectBuffer;

/** What {@link UctWorker#drain} reports, on the worker's thread, in the order UCT produced it. */
interface UctEventHandler {
    /**
     * An operation that returned in progress is done.
     *
     * @param token the operation's token
     * @param status {@link UctStatus#OK} or an error
     * @param value the fetched value of a fetching atomic or compare-and-swap
     */
    void completed(long token, int status, long value);

    /**
     * An active message arrived. The bytes are valid during the call only.
     *
     * @param iface the receiving iface's handle
     * @param id the message id
     * @param data the buffer holding it: for a short message its 8-byte header, then the payload
     * @param offset where it starts in {@code data}
     * @param length its length
     */
    void activeMessage(long iface, int id, DirectBuffer data, int offset, int length);

    /**
     * A pending request's endpoint has room again.
     *
     * @param token the pending request's token
     */
    void ready(long token);

    /**
     * UCT reported an endpoint's peer failed; the endpoint serves nothing more.
     *
     * @param endpoint the endpoint's handle
     * @param status why
     */
    void endpointFailed(long endpoint, int status);
}
