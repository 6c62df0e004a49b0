/* Long double arithmetic for INCRBYFLOAT (and blocking timeouts). Redis parses, adds and prints
 * these values as C `long double` (80-bit x87 on x86-64); Rust has no such
 * type, so the exact same results need this small C shim. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRN_LD_MAX_CHARS (5 * 1024)

/* Parses `len` bytes as a long double with Redis's rules: no leading
 * space, the whole input consumed (an embedded NUL fails), no NaN, no
 * overflow/underflow to +-HUGE_VAL or zero. Returns 1 on success. */
static int parse_ld(const char *s, size_t len, long double *out) {
    char buf[FIRN_LD_MAX_CHARS];
    char *end;
    long double v;
    if (len == 0 || len >= sizeof(buf)) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || end[0] != '\0' || (size_t)(end - buf) != len ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        isnan(v))
        return 0;
    *out = v;
    return 1;
}

/* Computes value + incr and prints it like Redis ("%.17Lf" with trailing
 * zeros and a trailing dot removed, "-0" as "0").
 * Returns the length written to `out`, -1 if an input is not a float,
 * -2 if the result is NaN or infinite. */
int firn_incrbyfloat(const char *value, size_t value_len, const char *incr, size_t incr_len,
                     char *out, size_t out_cap) {
    long double a, b, sum;
    int n;
    if (!parse_ld(value, value_len, &a) || !parse_ld(incr, incr_len, &b)) return -1;
    sum = a + b;
    if (isnan(sum) || isinf(sum)) return -2;
    n = snprintf(out, out_cap, "%.17Lf", sum);
    if (n < 0 || (size_t)n + 1 > out_cap) return -1;
    if (strchr(out, '.') != NULL) {
        while (n > 0 && out[n - 1] == '0') n--;
        if (n > 0 && out[n - 1] == '.') n--;
    }
    if (n == 2 && out[0] == '-' && out[1] == '0') {
        out[0] = '0';
        n = 1;
    }
    out[n] = '\0';
    return n;
}

/* A blocking command's timeout in milliseconds as Redis 7.0's
 * getTimeoutFromObjectOrReply computes it: the argument as a long double,
 * times 1000, rounded up (ceill: 7.0.15's fix, so that a timeout under a
 * millisecond is not forever), cast to long long. The cast of a value out of range (inf,
 * 1e400) is undefined in C; x86-64 yields LLONG_MIN, which Redis then
 * reports as a negative timeout, so that is spelled out here.
 * Returns 0 if the argument is not a float, 1 otherwise. */
int firn_timeout_ms(const char *s, size_t len, long long *out) {
    long double seconds, ms;
    if (!parse_ld(s, len, &seconds)) return 0;
    ms = ceill(seconds * 1000.0);
    if (ms > -9223372036854775809.0L && ms < 9223372036854775808.0L)
        *out = (long long)ms;
    else
        *out = LLONG_MIN;
    return 1;
}
