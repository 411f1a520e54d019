package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The byte reading of the common check body: what it reads, it reads as the tree does; what it leaves to the tree
 * (anything outside its strict subset of JSON, anything wrong) is null. {@code HttpFuzzTest} compares both ways on
 * mutated bodies; these are the shapes it must take and must leave, written out.
 */
class PlainCheckJsonTest {

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"domain\":\"bench\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"u1\"}]}]}",
                " {\n\"descriptors\" :[ {\"entries\":[{ \"value\":\"42\" ,\"key\" : \"user\"}]} ] ,\r\t\"domain\":\"api\"}\n",
                "{\"domain\":\"api\",\"hits\":0,\"descriptors\":[{\"entries\":[{\"key\":\"ip\"}],\"hits_addend\":7},"
                        + "{\"entries\":[{\"key\":\"plan\",\"value\":\"free\"},{\"key\":\"user\",\"value\":\"\"}]}]}",
                "{\"descriptors\":[{\"hits\":2147483647,\"entries\":[{\"key\":\"k\",\"value\":\"a b/c:d\"}]}],"
                        + "\"hits_addend\":3,\"domain\":\"d\"}",
            })
    void theCommonBodyIsReadAsTheTreeReadsIt(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        assertThat(PlainCheckJson.parse(bytes, 8)).as(body).isNotNull().isEqualTo(CheckJson.parseTree(bytes, 8));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"domain\":\"a\\u0062\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}", // an escape
                "{\"domain\":\"é\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}", // beyond ASCII
                "{\"domain\":\"a\",\"hits\":01,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}", // leading zero
                "{\"domain\":\"a\",\"hits\":-1,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"hits\":1.0,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"hits\":1e2,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"hits\":2147483648,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"domain\":\"b\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}", // twice
                "{\"domain\":\"a\",\"hits\":1,\"hits_addend\":1,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"key\":\"j\"}]}]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"value\":null}]}]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"\"}]}]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[]}]}",
                "{\"domain\":\"a\",\"descriptors\":[]}",
                "{\"domain\":\"\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}],\"limit\":{}}]}", // a caller's limit
                "{\"domain\":\"a\",\"other\":1,\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]}x", // after the object
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]},]}",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]}]",
                "{\"domain\":\"a\",\"descriptors\":[{\"entries\":[{\"key\":\"k\"}]},{\"entries\":[{\"key\":\"k\"}]},"
                        + "{\"entries\":[{\"key\":\"k\"}]}]}", // more descriptors than allowed (2)
                "",
                "[]",
            })
    void anythingElseIsLeftToTheTree(String body) {
        assertThat(PlainCheckJson.parse(body.getBytes(StandardCharsets.UTF_8), 2))
                .as(body)
                .isNull();
    }
}
