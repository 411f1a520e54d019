package dev.sluice.doctest;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The docs' command-line sessions against a service, replayed: the fenced blocks marked
 * {@code <!-- transcript: NAME -->} (NAME says which service: {@code sluice serve}, {@code examples/spring-boot-api}),
 * in the order of the file, against one instance of that service, as a reader following the page would.
 *
 * <p>In a {@code bash} block every {@code curl} line is sent (a {@code for V in …; do curl …; done} loop too); other
 * lines ({@code ./sluice serve}, a {@code run.sh}) start the service, which the test has done. A comment line right
 * after a command that starts with a status code is its answer: {@code # 200 200 429} for a loop writing
 * {@code %{http_code}}, else {@code # 200} or {@code # 200 {"overall_code":"OK",…}} (status, then the body). A fence
 * right after the block, with only blank lines between and no marker of its own, is the answer of its last command:
 * with {@code -i}, the status line, the headers it shows and the body. In a {@code console} block, {@code $ } lines
 * are commands and the lines up to the next one are their output. See {@link Expected} for what may differ.
 */
public final class Transcript {
    private Transcript() {}

    /** One command and the answer the doc shows for it (null: none shown; it must then merely be sent). */
    public record Step(
            String where, String command, @Nullable String expected, boolean statusAndBody) {}

    /** The steps of every block of {@code file} marked {@code transcript: service}, in order. */
    public static List<Step> steps(Path file, String service) {
        List<Markdown.Fence> fences = Markdown.fences(file);
        List<String> lines = Markdown.lines(file).toList();
        List<Step> steps = new ArrayList<>();
        for (int f = 0; f < fences.size(); f++) {
            Markdown.Fence fence = fences.get(f);
            if (!fence.markerKind().equals("transcript") || !fence.markerText().equals(service)) {
                continue;
            }
            List<Step> block = fence.info().equals("console") ? console(fence) : bash(fence);
            if (f + 1 < fences.size() && answers(fence, fences.get(f + 1), lines) && !block.isEmpty()) {
                Step last = block.remove(block.size() - 1);
                if (last.expected() != null) {
                    throw new AssertionError(last.where() + ": an answer in a comment and a block after it");
                }
                block.add(new Step(last.where(), last.command(), fences.get(++f).text(), false));
            }
            steps.addAll(block);
        }
        if (steps.isEmpty()) {
            throw new AssertionError(Docs.relative(file) + " has no block marked <!-- transcript: " + service + " -->");
        }
        return steps;
    }

    /** Whether {@code next} is the answer of {@code block}: right after it, unmarked, only blank lines between. */
    private static boolean answers(Markdown.Fence block, Markdown.Fence next, List<String> lines) {
        if (!next.marker().isEmpty() || block.info().equals("console")) {
            return false;
        }
        for (int i = block.end(); i < next.line() - 2; i++) {
            if (!lines.get(i).isBlank()) {
                return false;
            }
        }
        return true;
    }

    private static final Pattern STATUS_COMMENT = Pattern.compile("^#\\s*(\\d{3}(?:\\s.*)?)$");

    private static List<Step> bash(Markdown.Fence fence) {
        List<Step> steps = new ArrayList<>();
        List<String> lines = fence.lines();
        boolean answerWindow = false;
        for (int i = 0; i < lines.size(); i++) {
            int start = i;
            StringBuilder command = new StringBuilder(lines.get(i));
            while (continues(command) && i + 1 < lines.size()) {
                command.append('\n').append(lines.get(++i));
            }
            String c = command.toString().replace("\\\n", " ").strip();
            String where = Docs.relative(fence.file()) + ":" + (fence.line() + start);
            if (c.isEmpty()) {
                answerWindow = false;
            } else if (c.startsWith("#")) {
                Matcher m = STATUS_COMMENT.matcher(c);
                if (answerWindow && m.matches()) {
                    Step last = steps.remove(steps.size() - 1);
                    steps.add(new Step(last.where(), last.command(), m.group(1), true));
                }
                answerWindow = false;
            } else {
                steps.add(new Step(where, c, null, false));
                answerWindow = true;
            }
        }
        return steps;
    }

    private static List<Step> console(Markdown.Fence fence) {
        List<Step> steps = new ArrayList<>();
        List<String> lines = fence.lines();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).startsWith("$ ")) {
                throw new AssertionError(
                        Docs.relative(fence.file()) + ":" + (fence.line() + i) + ": output before any $ command");
            }
            String where = Docs.relative(fence.file()) + ":" + (fence.line() + i);
            String command = lines.get(i).substring(2);
            StringBuilder out = new StringBuilder();
            while (i + 1 < lines.size() && !lines.get(i + 1).startsWith("$ ")) {
                out.append(lines.get(++i)).append('\n');
            }
            steps.add(new Step(where, command, out.toString(), false));
        }
        return steps;
    }

    /** A line ending in a backslash, or inside a quoted string: the command goes on. */
    private static boolean continues(CharSequence s) {
        boolean single = false;
        boolean dbl = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && !single) {
                i++;
            } else if (c == '\'' && !dbl) {
                single = !single;
            } else if (c == '"' && !single) {
                dbl = !dbl;
            }
        }
        return single || dbl || (s.length() > 0 && s.charAt(s.length() - 1) == '\\');
    }

    private static final Pattern FOR =
            Pattern.compile("^for\\s+(\\w+)\\s+in\\s+(.+?)\\s*;\\s*do\\s+(.+?)\\s*;\\s*done\\b(.*)$", Pattern.DOTALL);

    /**
     * Sends every step to the service at {@code base}, in order, and compares each answer with the doc's; returns
     * how many curl commands were sent. Every difference is reported, with the doc's file and line.
     */
    public static int replay(List<Step> steps, URI base) throws IOException, InterruptedException {
        List<String> failures = new ArrayList<>();
        int sent = 0;
        for (Step s : steps) {
            StringBuilder output = new StringBuilder();
            Curl.Answer last = null;
            Curl lastCurl = null;
            Matcher loop = FOR.matcher(s.command());
            List<String[]> runs = new ArrayList<>(); // {variable, value, command}
            if (loop.matches()) {
                for (String item : items(loop.group(2))) {
                    runs.add(new String[] {loop.group(1), item, loop.group(3)});
                }
            } else {
                runs.add(new String[] {null, null, s.command()});
            }
            for (String[] run : runs) {
                List<String> words = ShellWords.split(run[2], run[0] == null ? Map.of() : Map.of(run[0], run[1]));
                if (words.isEmpty() || !words.contains("curl")) {
                    continue; // starts the service: the test has
                }
                if (!words.get(0).equals("curl") || words.contains("|") || words.contains(";")) {
                    throw new AssertionError(s.where() + ": only plain curl commands are replayed: " + s.command());
                }
                lastCurl = Curl.parse(words);
                last = lastCurl.send(base);
                output.append(lastCurl.output(last));
                sent++;
            }
            if (s.expected() == null || lastCurl == null || last == null) {
                continue;
            }
            List<String> differences = new ArrayList<>();
            if (s.statusAndBody() && lastCurl.writeOut == null) {
                String[] statusBody = s.expected().split("\\s+", 2);
                if (Integer.parseInt(statusBody[0]) != last.status()) {
                    differences.add("status " + last.status() + ", the doc shows " + statusBody[0]);
                }
                if (statusBody.length > 1 && !Expected.matches(statusBody[1], last.body())) {
                    differences.add("body " + last.body() + "\n    the doc shows " + statusBody[1]);
                }
            } else if (lastCurl.include && !lastCurl.discardBody && runs.size() == 1) {
                differences.addAll(Expected.differencesWithHead(s.expected(), last));
            } else if (!Expected.matches(s.expected(), output.toString())) {
                differences.add("output " + output.toString().strip() + "\n    the doc shows "
                        + s.expected().strip());
            }
            for (String d : differences) {
                failures.add(s.where() + ": " + d);
            }
        }
        if (!failures.isEmpty()) {
            throw new AssertionError(
                    "the docs show other answers than the service gives:\n  " + String.join("\n  ", failures));
        }
        return sent;
    }

    /** A loop's items: words, or {@code $(seq N)}. */
    private static List<String> items(String words) {
        Matcher seq = Pattern.compile("^\\$\\(seq (\\d+)\\)$").matcher(words.strip());
        if (seq.matches()) {
            List<String> out = new ArrayList<>();
            for (int i = 1; i <= Integer.parseInt(seq.group(1)); i++) {
                out.add(String.valueOf(i));
            }
            return out;
        }
        return List.of(words.strip().split("\\s+"));
    }
}
