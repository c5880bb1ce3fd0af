package dev.fenceline;

/**
 * What one lane slot of an endpoint has done, since the endpoint was connected.
 *
 * @param index the slot
 * @param transport the transport of the connection in the slot now ({@code -} when empty)
 * @param live whether the slot holds a live connection
 * @param operations requests sent on the slot (a request restarted elsewhere counts there too)
 * @param fragments transport operations posted (a large put or get is several)
 * @param bytes payload bytes posted
 * @param restarts fragments restarted on other lanes after this slot's connection changed
 * @param failovers times the slot's connection failed and the endpoint went on without it
 * @param noResourceParks times the lane had no room and an operation or flush waited for it
 */
public record LaneStatistics(int index, String transport, boolean live, long operations, long fragments, long bytes,
        long restarts, long failovers, long noResourceParks) {
}
