package dev.sluice.doctest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The little of a POSIX shell's word splitting that the docs' command lines use: single quotes (literal), double
 * quotes (with {@code $VAR}, {@code ${VAR}} and the escapes {@code \" \\ \$}), backslash escapes outside quotes,
 * {@code #} comments and the separators {@code ;} and {@code |}, each returned as a word of its own.
 */
final class ShellWords {
    private ShellWords() {}

    /** The words of {@code line}, variables taken from {@code env}; a separator is the word ";" or "|". */
    static List<String> split(String line, Map<String, String> env) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean inWord = false;
        int i = 0;
        int n = line.length();
        while (i < n) {
            char c = line.charAt(i);
            if (c == '\'') {
                int end = line.indexOf('\'', i + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("unclosed ' in: " + line);
                }
                w.append(line, i + 1, end);
                inWord = true;
                i = end + 1;
            } else if (c == '"') {
                i = doubleQuoted(line, i + 1, w, env);
                inWord = true;
            } else if (c == '\\' && i + 1 < n) {
                w.append(line.charAt(i + 1));
                inWord = true;
                i += 2;
            } else if (c == '$') {
                i = variable(line, i, w, env);
                inWord = true;
            } else if (Character.isWhitespace(c) || c == ';' || c == '|') {
                if (inWord) {
                    words.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
                if (c != ' ' && c != '\t' && c != '\n') {
                    words.add(String.valueOf(c));
                }
                i++;
            } else if (c == '#' && !inWord) {
                break; // a comment to the end of the line
            } else {
                w.append(c);
                inWord = true;
                i++;
            }
        }
        if (inWord) {
            words.add(w.toString());
        }
        return words;
    }

    private static int doubleQuoted(String line, int i, StringBuilder w, Map<String, String> env) {
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\' && i + 1 < line.length() && "\"\\$`".indexOf(line.charAt(i + 1)) >= 0) {
                w.append(line.charAt(i + 1));
                i += 2;
            } else if (c == '$') {
                i = variable(line, i, w, env);
            } else {
                w.append(c);
                i++;
            }
        }
        throw new IllegalArgumentException("unclosed \" in: " + line);
    }

    /** {@code $NAME} or {@code ${NAME}} at {@code i}: appends its value; returns the index after it. */
    private static int variable(String line, int i, StringBuilder w, Map<String, String> env) {
        int start = i + 1;
        boolean braced = start < line.length() && line.charAt(start) == '{';
        int j = braced ? start + 1 : start;
        while (j < line.length() && (Character.isLetterOrDigit(line.charAt(j)) || line.charAt(j) == '_')) {
            j++;
        }
        String name = line.substring(braced ? start + 1 : start, j);
        if (name.isEmpty()) {
            w.append('$');
            return i + 1;
        }
        String value = env.get(name);
        if (value == null) {
            throw new IllegalArgumentException("$" + name + " is not set in: " + line);
        }
        w.append(value);
        return braced ? j + 1 : j;
    }
}
