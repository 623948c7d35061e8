/* monotime.h: the monotonic clock, for deadlines, intervals and rates. It never jumps with the wall
 * clock, so it cannot serve for times shown to people or written to the API (see rfc3339.h). */
#ifndef ZK_MONOTIME_H
#define ZK_MONOTIME_H

/* Seconds since an arbitrary fixed point. */
double monotime_s(void);

/* Milliseconds since the same point. */
long long monotime_ms(void);

#endif
