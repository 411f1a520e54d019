package dev.sluice.dist;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The instructions of {@code dist/image/Dockerfile}, read as a builder reads them: one per line, a line ending in
 * {@code \} continued on the next, comments dropped; {@code ENTRYPOINT} and {@code CMD} in their exec (JSON) form.
 */
record Dockerfile(List<Instruction> instructions) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One instruction: its keyword in capitals, and the rest of its line(s). */
    record Instruction(String keyword, String arguments) {}

    static Dockerfile read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Instruction> instructions = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : lines) {
            String l = line.strip();
            if (l.startsWith("#") || (l.isEmpty() && current.length() == 0)) {
                continue;
            }
            if (l.endsWith("\\")) {
                current.append(l, 0, l.length() - 1).append(' ');
                continue;
            }
            current.append(l);
            String whole = current.toString().strip();
            current.setLength(0);
            int space = whole.indexOf(' ');
            instructions.add(new Instruction(
                    whole.substring(0, space), whole.substring(space + 1).strip()));
        }
        return new Dockerfile(instructions);
    }

    /** The arguments of every instruction with this keyword, in order. */
    List<String> all(String keyword) {
        return instructions.stream()
                .filter(i -> i.keyword().equals(keyword))
                .map(Instruction::arguments)
                .toList();
    }

    /** The arguments of the one instruction with this keyword (the last one, as a builder takes it). */
    String last(String keyword) {
        List<String> all = all(keyword);
        if (all.isEmpty()) {
            throw new AssertionError("no " + keyword + " in the Dockerfile");
        }
        return all.get(all.size() - 1);
    }

    /** {@code ENTRYPOINT} then {@code CMD}: the command the image runs when given none. */
    List<String> command() {
        List<String> command = new ArrayList<>(execForm("ENTRYPOINT"));
        command.addAll(execForm("CMD"));
        return command;
    }

    List<String> execForm(String keyword) {
        try {
            JsonNode array = JSON.readTree(last(keyword));
            List<String> words = new ArrayList<>();
            array.forEach(n -> words.add(n.asText()));
            return words;
        } catch (IOException e) {
            throw new AssertionError(keyword + " is not in the exec form, a JSON array: " + last(keyword), e);
        }
    }

    /** The ports of {@code EXPOSE}. */
    List<Integer> exposed() {
        List<Integer> ports = new ArrayList<>();
        for (String expose : all("EXPOSE")) {
            for (String p : expose.strip().split("\\s+", -1)) {
                ports.add(Integer.parseInt(p.replace("/tcp", "")));
            }
        }
        return ports;
    }

    /** The {@code ARG}s with a default value ({@code ARG NAME=VALUE}). */
    Map<String, String> argDefaults() {
        Map<String, String> args = new LinkedHashMap<>();
        for (String a : all("ARG")) {
            int eq = a.indexOf('=');
            if (eq > 0) {
                args.put(a.substring(0, eq), a.substring(eq + 1));
            }
        }
        return args;
    }
}
