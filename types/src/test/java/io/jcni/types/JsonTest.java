package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void parsesNestedValuesKeepingKeyOrder() {
        Map<String, Object> m = Json.parseObject("{\"z\":1,\"a\":[true,false,null,\"s\"],\"m\":{\"x\":-2.5e3}}");
        assertEquals(List.of("z", "a", "m"), List.copyOf(m.keySet()));
        assertEquals(1L, m.get("z"));
        assertEquals(java.util.Arrays.asList(true, false, null, "s"), m.get("a"));
        assertEquals(new BigDecimal("-2.5e3"), Json.asObject(m.get("m")).get("x"));
    }

    @Test
    void unescapesStringsAndEscapesLikeGo() {
        Object v = Json.parse("\"a\\n\\\"b\\u00e9\\/<\"");
        assertEquals("a\n\"b\u00e9/<", v);
        assertEquals("\"a\\n\\\"b\u00e9/\\u003c\"", Json.write(v));
    }

    @Test
    void bigIntegersSurvive() {
        Object v = Json.parse("123456789012345678901234567890");
        assertEquals("123456789012345678901234567890", Json.write(v));
        assertEquals(Long.MAX_VALUE, Json.parse(Long.toString(Long.MAX_VALUE)));
    }

    @Test
    void prettyPrintsWithFourSpaces() {
        assertEquals("{\n    \"a\": [\n        1\n    ],\n    \"b\": {}\n}", Json.writePretty(Json.parse("{\"a\":[1],\"b\":{}}")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "{\"a\"}", "{\"a\":}", "[1,]", "tru", "\"abc", "{\"a\":1} x", "01x", "-", "{'a':1}", "\"\\q\""})
    void rejectsMalformedInput(String text) {
        Json.JsonException e = assertThrows(Json.JsonException.class, () -> Json.parse(text));
        assertTrue(e.getMessage().contains("line"), e.getMessage());
    }

    /** Go's decoder refuses these numbers as invalid JSON (RFC 8259), so jcni does too. */
    @ParameterizedTest
    @ValueSource(strings = {"01500", "-01", "00", "1.", ".5", "-.5", "+1", "1e", "1e+", "1.e3", "--1", "1-2", "0x10", "1E+-3"})
    void rejectsNumbersGoRejects(String text) {
        assertThrows(Json.JsonException.class, () -> Json.parse(text));
        assertThrows(Json.JsonException.class, () -> Json.parse("{\"mtu\":" + text + "}"));
    }

    @Test
    void numbersKeepWhetherTheyWereWrittenAsIntegers() {
        assertEquals(1500L, Json.parse("1500"));
        assertEquals(0L, Json.parse("-0"));
        assertEquals(new BigDecimal("1500.0"), Json.parse("1500.0"));
        assertEquals(new BigDecimal("1e3"), Json.parse("1e3"));
        assertEquals(new BigDecimal("0.5E-2"), Json.parse("0.5E-2"));
        assertEquals(Long.MIN_VALUE, Json.parse(Long.toString(Long.MIN_VALUE)));
        assertEquals(new java.math.BigInteger("18446744073709551615"), Json.parse("18446744073709551615"));
    }

    /** Go applies keys in document order: a repeated key counts once, where it last appears, with its last value. */
    @Test
    void aRepeatedKeyKeepsItsLastValueAtItsLastPosition() {
        Map<String, Object> m = Json.parseObject("{\"mtu\":1,\"MTU\":2,\"mtu\":3}");
        assertEquals(List.of("MTU", "mtu"), List.copyOf(m.keySet()));
        assertEquals(3L, m.get("mtu"));
        assertEquals(3L, Fields.integer(m, "mtu", ""));
    }

    static Stream<Long> seeds() {
        return IntStream.range(0, 25).mapToObj(i -> 1000L + i);
    }

    /** Property: write(parse(write(v))) == write(v) for random trees. */
    @ParameterizedTest
    @MethodSource("seeds")
    void roundTripsRandomTrees(long seed) {
        Random rnd = new Random(seed);
        Object tree = randomValue(rnd, 0);
        String text = Json.write(tree);
        assertEquals(text, Json.write(Json.parse(text)));
        assertEquals(text, Json.write(Json.parse(Json.writePretty(tree))));
    }

    private static Object randomValue(Random rnd, int depth) {
        int kind = depth > 4 ? rnd.nextInt(4) : rnd.nextInt(6);
        return switch (kind) {
            case 0 -> rnd.nextLong();
            case 1 -> randomString(rnd);
            case 2 -> rnd.nextBoolean();
            case 3 -> null;
            case 4 -> {
                Map<String, Object> m = new java.util.LinkedHashMap<>();
                for (int i = rnd.nextInt(5); i > 0; i--) m.put(randomString(rnd), randomValue(rnd, depth + 1));
                yield m;
            }
            default -> {
                List<Object> l = new java.util.ArrayList<>();
                for (int i = rnd.nextInt(5); i > 0; i--) l.add(randomValue(rnd, depth + 1));
                yield l;
            }
        };
    }

    private static String randomString(Random rnd) {
        StringBuilder sb = new StringBuilder();
        for (int i = rnd.nextInt(8); i > 0; i--) sb.append((char) (rnd.nextBoolean() ? 'a' + rnd.nextInt(26) : rnd.nextInt(0x3000)));
        return sb.toString();
    }
}
