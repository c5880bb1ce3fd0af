package dev.fenceline;

/** A configuration value is missing or invalid; the message names the key and the bad value. */
public class ConfigurationException extends FencelineException {
    private static final long serialVersionUID = 1L;

    /** @param message names the key, the value and what is allowed */
    public ConfigurationException(String message) {
        super(message);
    }

    /**
     * @param message names the key, the value and what is allowed
     * @param cause the parser's error
     */
    public ConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
