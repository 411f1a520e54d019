package dev.sluice.example.llm;

/**
 * What answers a prompt: in production a call to a model server; here {@link EchoModel}. How many tokens a
 * completion uses is known only once it is done, which is why the gateway's token limit settles afterwards.
 */
public interface CompletionModel {

    /** The completion of {@code prompt}, at most {@code maxTokens} tokens long. */
    Completion complete(String prompt, int maxTokens);

    /**
     * A completion and its usage, counted as OpenAI's API counts it.
     *
     * @param text the completion
     * @param promptTokens the tokens of the prompt
     * @param completionTokens the tokens of the completion
     */
    record Completion(String text, int promptTokens, int completionTokens) {
        public int totalTokens() {
            return promptTokens + completionTokens;
        }
    }
}
