package dev.sluice.postgres;

import dev.sluice.Degradation;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The SQL that creates Sluice's tables and functions, as plain files in the jar under
 * {@code dev/sluice/postgres/} ({@link #FILES}, applied in order).
 *
 * <p>The files are written for schema {@code public} and table prefix {@code sluice_}, so a person can
 * apply them as they are with {@code psql -v ON_ERROR_STOP=1 -f}. For another schema or prefix they are
 * rendered by a fixed substitution of two tokens, never from user text: the schema qualifier
 * {@code public.} and names starting {@code sluice_} (both validated against a strict pattern, then
 * quoted). {@code java -cp sluice-postgres.jar:sluice-core.jar dev.sluice.postgres.Migrations SCHEMA PREFIX}
 * prints the rendered SQL for psql.
 *
 * <p>Every statement is idempotent ({@code IF NOT EXISTS}, {@code CREATE OR REPLACE}): applying the files
 * twice changes nothing.
 */
public final class Migrations {

    /** The migration files, in the order they are applied. */
    public static final List<String> FILES = List.of(
            "001_tables.sql",
            "002_token_bucket.sql",
            "003_fixed_window.sql",
            "004_sliding_window.sql",
            "005_sliding_log.sql",
            "006_seed_function.sql",
            "007_settle.sql",
            "007_settle_windows.sql",
            "008_in_flight.sql",
            "009_in_flight_many.sql");

    /** The default schema: where unqualified names resolve on most databases. */
    public static final String DEFAULT_SCHEMA = "public";
    /** The default prefix of every table and function name. */
    public static final String DEFAULT_PREFIX = "sluice_";

    private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final Pattern PREFIX = Pattern.compile("[a-z_][a-z0-9_]{0,39}");
    private static final Pattern SCHEMA_TOKEN = Pattern.compile("\\bpublic\\.");
    private static final Pattern NAME_TOKEN = Pattern.compile("\\bsluice_([a-z0-9_]+)");
    private static final Pattern CREATE_SCHEMA = Pattern.compile("create schema if not exists public;");
    private static final Pattern SCHEMA_LITERAL = Pattern.compile("nspname = 'public'");

    private Migrations() {}

    /** Checks a schema name: lower-case letters, digits and underscores, not starting with a digit. */
    public static String checkSchema(String schema) {
        if (schema == null || !SCHEMA.matcher(schema).matches()) {
            throw new IllegalArgumentException("schema " + (schema == null ? "null" : "'" + schema + "'")
                    + " is not a plain lower-case SQL name: use 1 to 63 of a-z, 0-9 and _, not starting with a digit,"
                    + " e.g. \"sluice\"");
        }
        return schema;
    }

    /** Checks a table prefix: lower-case letters, digits and underscores, not starting with a digit. */
    public static String checkPrefix(String prefix) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("table prefix " + (prefix == null ? "null" : "'" + prefix + "'")
                    + " is not a plain lower-case SQL name: use 1 to 40 of a-z, 0-9 and _, not starting with a digit,"
                    + " e.g. \"sluice_\"");
        }
        return prefix;
    }

    /** One migration file as shipped (schema {@code public}, prefix {@code sluice_}). */
    public static String raw(String file) {
        if (!FILES.contains(file)) {
            throw new IllegalArgumentException("no migration file '" + file + "': use one of " + FILES);
        }
        try (InputStream in = Migrations.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("migration " + file + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read migration " + file, e);
        }
    }

    /** One migration file rendered for a schema and prefix. */
    public static String render(String file, String schema, String prefix) {
        String sql = raw(file);
        String s = quote(checkSchema(schema));
        String p = checkPrefix(prefix);
        sql = CREATE_SCHEMA.matcher(sql).replaceAll(Matcher.quoteReplacement("create schema if not exists " + s + ";"));
        // the schema name as a string literal (the existence check before CREATE SCHEMA): checkSchema allows
        // no quote, so the validated name is a safe literal as it is
        sql = SCHEMA_LITERAL.matcher(sql).replaceAll(Matcher.quoteReplacement("nspname = '" + schema + "'"));
        sql = SCHEMA_TOKEN.matcher(sql).replaceAll(Matcher.quoteReplacement(s + "."));
        Matcher m = NAME_TOKEN.matcher(sql);
        StringBuilder out = new StringBuilder(sql.length() + 256);
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(quote(p + m.group(1))));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** All files rendered for a schema and prefix, in order: what {@link PostgresRateLimiter#migrate()} runs. */
    public static String render(String schema, String prefix) {
        StringBuilder all = new StringBuilder();
        for (String f : FILES) {
            all.append("-- ")
                    .append(f)
                    .append('\n')
                    .append(render(f, schema, prefix))
                    .append('\n');
        }
        return all.toString();
    }

    /**
     * Sluice's objects in the schema, {@code kind name} to a digest of their definition (functions; empty for the
     * rest, which the files only ever create): the schema itself, relations and functions named with the prefix.
     */
    private static Map<String, String> catalog(Connection c, String schema, String prefix) throws SQLException {
        String named = prefix.replace("_", "\\_") + "%"; // a LIKE pattern: the prefix's _ taken literally
        Map<String, String> objects = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(CATALOG)) {
            ps.setString(1, schema);
            ps.setString(2, schema);
            ps.setString(3, named);
            ps.setString(4, schema);
            ps.setString(5, named);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    objects.put(rs.getString(1) + " " + rs.getString(2), rs.getString(3));
                }
            }
        }
        return objects;
    }

    private static final String CATALOG = """
            select 'schema', nspname::text, '' from pg_catalog.pg_namespace where nspname = ?  -- text: a name is 63 bytes
            union all
            select case c.relkind when 'r' then 'table' when 'i' then 'index' when 'S' then 'sequence'
                                  when 'v' then 'view' else 'relation' end, c.relname::text, ''
              from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
             where n.nspname = ? and c.relname like ?
            union all
            select 'function', p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')',
                   md5(pg_catalog.pg_get_functiondef(p.oid))
              from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = ? and p.proname like ?
             order by 1, 2
            """;

    static String quote(String identifier) {
        return '"' + identifier + '"';
    }

    /** Prints the migrations for {@code [schema [prefix]]} to standard output, for {@code psql -f -}. */
    public static void main(String[] args) {
        String schema = args.length > 0 ? args[0] : DEFAULT_SCHEMA;
        String prefix = args.length > 1 ? args[1] : DEFAULT_PREFIX;
        System.out.print(render(schema, prefix));
    }

    /**
     * Creates (or brings up to date) the tables, indexes and functions in {@code schema}, in one transaction,
     * serialized between instances on an advisory lock where the database has them. Idempotent: on a schema
     * already up to date it changes nothing, and the report says so.
     *
     * @return what it created and changed, read from the catalog before and after (in the same transaction)
     */
    public static MigrationReport apply(DataSource dataSource, String schema, String prefix) {
        checkSchema(schema);
        checkPrefix(prefix);
        try (Connection c = dataSource.getConnection()) {
            boolean auto = c.getAutoCommit();
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                try {
                    st.execute("select pg_advisory_xact_lock(7291001, 1)");
                } catch (SQLException noAdvisoryLocks) {
                    c.rollback(); // e.g. a YugabyteDB without advisory locks: go on without
                }
                Map<String, String> before = catalog(c, schema, prefix);
                for (String file : FILES) {
                    st.execute(render(file, schema, prefix));
                }
                Map<String, String> after = catalog(c, schema, prefix);
                c.commit();
                List<String> created = new ArrayList<>();
                List<String> updated = new ArrayList<>();
                after.forEach((object, definition) -> {
                    if (!before.containsKey(object)) {
                        created.add(object);
                    } else if (!before.get(object).equals(definition)) {
                        updated.add(object);
                    }
                });
                return new MigrationReport(schema, created, updated);
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(auto);
            }
        } catch (SQLException e) {
            String state = e.getSQLState();
            throw new PostgresStoreException(
                    "migration of schema " + schema + " (prefix " + prefix + ") failed: " + e.getMessage()
                            + " (SQLSTATE " + state + ")",
                    state,
                    e,
                    PostgresFailures.isTimeout(e)
                            ? Degradation.TIMEOUT
                            : PostgresFailures.isUnreachable(e, state)
                                    ? Degradation.UNAVAILABLE
                                    : Degradation.STORE_ERROR);
        }
    }
}
