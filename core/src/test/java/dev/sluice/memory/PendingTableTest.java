package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The reservations' table of one stripe: found by (key hash, id), kept oldest first, records reused. */
class PendingTableTest {

    @Test
    void manyReservationsOfOneKeyAreEachFoundAndRemovedWhateverTheOrder() {
        PendingTable t = new PendingTable();
        int n = 1_000; // grows the buckets from 16 several times; one key hash: chains told apart by the id
        for (int i = 0; i < n; i++) {
            t.add(42L, "r" + i, i, 10L * i, 100L * i);
        }
        t.add(43L, "r0", -1, -1, -1); // another key, same id
        for (int i = 0; i < n; i++) {
            PendingTable.Pending p = t.get(42L, "r" + i);
            assertThat(p).isNotNull();
            assertThat(p.estimate).isEqualTo(i);
            assertThat(p.reservedAt).isEqualTo(10L * i);
            assertThat(p.expiresAt).isEqualTo(100L * i);
        }
        assertThat(t.get(43L, "r0").estimate).isEqualTo(-1);
        assertThat(t.get(42L, "r" + n)).isNull();
        assertThat(t.get(44L, "r0")).isNull();

        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(7));
        List<Integer> gone = order.subList(0, n / 2);
        for (int i : gone) {
            t.remove(t.get(42L, "r" + i));
        }
        List<Long> left = new ArrayList<>();
        for (PendingTable.Pending p = t.oldest(); p != null; p = PendingTable.newer(p)) {
            left.add(p.hash == 42L ? p.estimate : -1);
        }
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            if (!gone.contains((int) i)) {
                expected.add(i);
            }
        }
        expected.add(-1L);
        assertThat(left).as("the records left, oldest first").isEqualTo(expected);
        for (int i : gone) {
            assertThat(t.get(42L, "r" + i)).isNull();
        }
    }

    @Test
    void aRemovedRecordIsReusedAndForgetsItsId() {
        PendingTable t = new PendingTable();
        t.add(1L, "a", 5, 6, 7);
        PendingTable.Pending a = t.get(1L, "a");
        t.remove(a);
        assertThat(a.id).as("a spare keeps no caller's id alive").isNull();
        assertThat(t.oldest()).isNull();
        assertThat(t.get(1L, "a")).isNull();

        t.add(2L, "b", 8, 9, 10);
        PendingTable.Pending b = t.get(2L, "b");
        assertThat(b).as("the spare record, reused").isSameAs(a);
        assertThat(b.estimate).isEqualTo(8);
        assertThat(t.oldest()).isSameAs(b);
        assertThat(PendingTable.newer(b)).isNull();
    }
}
