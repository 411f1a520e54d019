package dev.sluice.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PathPatternTest {

    @Test
    void doubleStarMatchesTheDirectoryAndEverythingUnderIt() {
        PathPattern p = PathPattern.of("/api/**");
        assertThat(p.matches("/api")).isTrue();
        assertThat(p.matches("/api/a/b/c")).isTrue();
        assertThat(p.matches("/apix")).isFalse();
        assertThat(p.matches("/other/api")).isFalse();
    }

    @Test
    void singleStarStaysWithinASegment() {
        PathPattern p = PathPattern.of("/items/*/reviews");
        assertThat(p.matches("/items/42/reviews")).isTrue();
        assertThat(p.matches("/items/42/x/reviews")).isFalse();
        assertThat(PathPattern.of("/files/*.json").matches("/files/a.json")).isTrue();
        assertThat(PathPattern.of("/files/*.json").matches("/files/a.xml")).isFalse();
    }

    @Test
    void doubleStarInTheMiddleMatchesAnyDepth() {
        PathPattern p = PathPattern.of("/a/**/z");
        assertThat(p.matches("/a/z")).isTrue();
        assertThat(p.matches("/a/b/c/z")).isTrue();
        assertThat(p.matches("/a/b/c")).isFalse();
    }

    @Test
    void literalPatternsMatchLikeTheGeneralMatcher() {
        assertThat(PathPattern.of("/login").matches("/login")).isTrue();
        assertThat(PathPattern.of("/login").matches("/login/")).isTrue();
        assertThat(PathPattern.of("/login").matches("/login/x")).isFalse();
        assertThat(PathPattern.of("/login").matches("/logins")).isFalse();
        assertThat(PathPattern.of("/**").matches("/")).isTrue();
        assertThat(PathPattern.of("/**").matches("/anything/at/all")).isTrue();
        assertThat(PathPattern.of("/api/v1/**").matches("/api/v1/")).isTrue();
        assertThat(PathPattern.of("/api/v1/**").matches("/api/v10")).isFalse();
        assertThat(PathPattern.of("/").matches("/")).isTrue();
        assertThat(PathPattern.of("/").matches("/x")).isFalse();
    }

    @Test
    void patternWithoutLeadingSlashIsRejectedWithAnExample() {
        assertThatThrownBy(() -> PathPattern.of("api/**")).hasMessageContaining("'api/**' must start with '/'");
    }
}
