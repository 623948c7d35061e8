/* flag.h: command-line flags, declared as a table and parsed the same way in both programs.
 *
 * A program lists its flags once, as an array of struct flag (name, type, where the value goes), and
 * flag_parse fills the destinations from argv. One table means one idiom: each flag's refusal reads the
 * same ("invalid --workers 0: expected a whole number from 1 to 64"), and --help can be checked against
 * the table. The value parsers under the table are public too, for values that are not flags.
 *
 * The value parsers return ZK_OK and set *out, or ZK_EINVAL and leave *out alone. Pure. */
#ifndef ZK_FLAG_H
#define ZK_FLAG_H

#include <stddef.h>

struct zk_err;

/* What a flag takes, and so the type dst points to. */
enum flag_type {
    FLAG_STRING,      /* const char *: the argument as given (it points into argv) */
    FLAG_SWITCH,      /* int: set to 1; the flag takes no value (--help, --stdio) */
    FLAG_BOOL,        /* int: an optional =true|false|1|0; the bare flag means true */
    FLAG_INT,         /* int: a whole number in [lo, hi] */
    FLAG_LONG,        /* long: a whole number in [lo, hi] */
    FLAG_SIZE,        /* size_t: a whole number in [lo, hi], lo >= 0 */
    FLAG_SECONDS,     /* double: a positive number of seconds, fractions allowed */
    FLAG_DURATION_MS, /* long: a duration (flag_duration_ms) of at most hi milliseconds, in milliseconds */
    FLAG_DURATION_S,  /* long: a duration in whole seconds, in seconds */
    FLAG_FUNC,        /* anything: parse(value, dst) decides, and expected must say what it takes */
};

struct flag {
    const char *name; /* without the leading "--" */
    enum flag_type type;
    void *dst;
    long lo, hi; /* FLAG_INT, FLAG_LONG, FLAG_SIZE: the range; FLAG_DURATION_MS: hi is the maximum */
    int (*parse)(const char *value, void *dst); /* FLAG_FUNC: ZK_OK, or ZK_EINVAL leaving dst alone */
    const char *expected; /* what a refusal says the flag takes; NULL: worded from the type and range */
};

/* Parses argv[1..argc-1] against the n flags: "--name value" and "--name=value" both work. Returns
 * ZK_OK with every given flag's value stored in its dst, or ZK_EINVAL with err saying which argument
 * was wrong and what was expected (an invalid value, an unknown flag, a missing value, a value given to
 * a switch, or an argument that is not a flag). Flags given twice keep the last value, except that a
 * FLAG_FUNC sees each. Uses getopt_long, so not thread-safe; call it from main. */
int flag_parse(const struct flag *flags, size_t n, int argc, char **argv, struct zk_err *err)
    __attribute__((warn_unused_result));

/* A whole decimal number in [lo, hi]. */
int flag_long(const char *s, long lo, long hi, long *out);

/* "true" or "1", "false" or "0". NULL, a flag given without "=value" (--leader-elect), means true. */
int flag_bool(const char *s, int *out);

/* A positive number, fractions allowed ("15", "2.5"). */
int flag_positive(const char *s, double *out);

/* A positive duration of at most max_ms milliseconds, in milliseconds: a bare number of seconds ("30"),
 * or numbers with units ms, s, m, h or d, one after another ("1500ms", "30s", "1h30m", "2d"). */
int flag_duration_ms(const char *s, long max_ms, long *out);

#endif
