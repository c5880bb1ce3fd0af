package dev.fenceline.testkit.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The words {@link HistoryChecker} models as receiving only ADDs, and what their fetched values
 * must say about each other.
 */
final class AddWords {
    private AddWords() {
    }

    /**
     * Words touched by atomics, and whether only by ADDs with non-negative operands, all of one
     * width, and by no put or other atomic over any of their bytes.
     *
     * @param ops the history's calls
     * @return by start address, whether the word is modelled as ADD-only
     */
    static Map<Long, Boolean> addOnly(List<Op> ops) {
        Map<Long, Boolean> words = new HashMap<>();
        java.util.TreeMap<Long, Integer> widths = new java.util.TreeMap<>(); // start -> widest atomic there
        for (Op op : ops) {
            if (op.isAdd()) {
                words.merge(op.address(), op.operand() >= 0, Boolean::logicalAnd);
            } else if (op.kind() == Op.Kind.OTHER_ATOMIC) {
                words.put(op.address(), false);
            }
            if (op.isAdd() || op.kind() == Op.Kind.OTHER_ATOMIC) {
                Integer before = widths.put(op.address(), Math.max(width(op), widths.getOrDefault(op.address(), 0)));
                if (before != null && before != width(op)) {
                    words.put(op.address(), false); // two widths at one start (ADD32 and ADD64 at x)
                }
            }
        }
        for (Map.Entry<Long, Integer> w : widths.entrySet()) {
            // Other atomics' words over some of these bytes (ADD64 at x beside SWAP32 at x + 4).
            for (Long other : widths.subMap(w.getKey(), false, w.getKey() + w.getValue(), false).keySet()) {
                words.put(w.getKey(), false);
                words.put(other, false);
            }
        }
        for (Op op : ops) {
            if (op.kind() == Op.Kind.PUT) {
                for (Map.Entry<Long, Boolean> w : words.entrySet()) {
                    if (op.address() < w.getKey() + widths.get(w.getKey()) && w.getKey() < op.address() + op.length()) {
                        w.setValue(false);
                    }
                }
            }
        }
        return words;
    }

    /** A call's length in bytes: a put's, an atomic's width (8 where none was recorded). */
    static int width(Op atomic) {
        return atomic.length() > 0 ? atomic.length() : 8;
    }

    /**
     * The fetched ADDs on one word saw each other's: applied one at a time, each after the one
     * before it in the word's order, a fetch sees at least what the fetch before it saw plus that
     * one's own operand (every operand is non-negative), and the last one's add is in the word's
     * end. Two fetches of +1 that both saw 0 mean one add was applied twice, or not atomically, or
     * a fetch was answered with another's value.
     *
     * @param ops the history's calls
     * @param history their outcomes
     * @param word an ADD-only word
     * @param base its value before the history began
     * @param added what the ADDs added to it in all
     * @param bad where a violation is reported (one per word)
     */
    static void checkFetches(List<Op> ops, History history, long word, long base, long added, List<String> bad) {
        List<Op> fetches = new ArrayList<>();
        for (Op a : ops) {
            Outcome o = history.outcome(a);
            if (a.kind() == Op.Kind.ADD_FETCH && a.address() == word && o != null && o.ok()) {
                fetches.add(a);
            }
        }
        fetches.sort(java.util.Comparator.<Op>comparingLong(a -> history.outcome(a).value())
                .thenComparingLong(Op::operand));
        for (int i = 0; i < fetches.size(); i++) {
            Op a = fetches.get(i);
            long seenA = history.outcome(a).value() - base;
            long next = i + 1 < fetches.size() ? history.outcome(fetches.get(i + 1)).value() - base : added;
            if (next < seenA + a.operand()) {
                bad.add(i + 1 < fetches.size()
                        ? "fetches #" + a.id() + " and #" + fetches.get(i + 1).id() + " at 0x" + Long.toHexString(word)
                                + " saw " + seenA + " and " + next + " added: one of them missed the other's ADD of "
                                + a.operand() + " (applied twice, not atomically, or answered with another's value)"
                        : "fetch #" + a.id() + " at 0x" + Long.toHexString(word) + " saw " + seenA + " added and"
                                + " added " + a.operand() + ", but the word ends at " + added);
                return;
            }
        }
    }
}
