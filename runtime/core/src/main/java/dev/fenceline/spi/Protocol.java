package dev.fenceline.spi;

/** How one operation travels on its lane, as the endpoint chose it ({@link TransportOp#protocol()}). */
public enum Protocol {
    /** The payload inline with the request. */
    SHORT,
    /** The payload copied into a transport buffer. */
    BCOPY,
    /** The payload sent from (or received into) the caller's buffer itself. */
    ZCOPY,
    /** An atomic the lane's hardware does. */
    HARDWARE_ATOMIC,
    /** An atomic the target applies in software (a request it answers). */
    SOFTWARE_ATOMIC,
    /** An active message. */
    ACTIVE_MESSAGE
}
