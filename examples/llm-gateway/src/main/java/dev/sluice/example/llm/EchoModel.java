package dev.sluice.example.llm;

import java.util.ArrayList;
import java.util.List;
import org.springframework.stereotype.Component;

/**
 * A stand-in model, deterministic so that the README's numbers hold: a token is a word; the prompt's words are its
 * tokens, and the completion repeats them until it is {@code maxTokens} long.
 */
@Component
public class EchoModel implements CompletionModel {

    @Override
    public Completion complete(String prompt, int maxTokens) {
        String[] words =
                prompt.strip().isEmpty() ? new String[] {"…"} : prompt.strip().split("\\s+", -1);
        List<String> out = new ArrayList<>(maxTokens);
        for (int i = 0; i < maxTokens; i++) {
            out.add(words[i % words.length]);
        }
        return new Completion(String.join(" ", out), words.length, maxTokens);
    }
}
