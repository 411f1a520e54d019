package dev.sluice.servlet;

import dev.sluice.Limit;
import dev.sluice.Permit;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** The permits of one request. */
final class AppliedRules {
    final String path;
    final List<String> names;
    final List<String> keys;
    final List<Limit> limits;
    final long[] costs;
    /** Why a rule's cost can never be granted (answered 400), or null. */
    @Nullable
    String badCost;

    AppliedRules(String path, int capacity) {
        this.path = path;
        this.names = new ArrayList<>(capacity);
        this.keys = new ArrayList<>(capacity);
        this.limits = new ArrayList<>(capacity);
        this.costs = new long[capacity];
    }

    void add(String name, String key, Limit limit, long cost) {
        costs[names.size()] = cost;
        names.add(name);
        keys.add(key);
        limits.add(limit);
    }

    int size() {
        return names.size();
    }

    List<Permit> permits() {
        List<Permit> p = new ArrayList<>(size());
        for (int i = 0; i < size(); i++) {
            p.add(Permit.of(keys.get(i), limits.get(i), costs[i]));
        }
        return p;
    }
}
