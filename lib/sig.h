/* sig.h: the signals that ask a program to stop. */
#ifndef ZK_SIG_H
#define ZK_SIG_H

#include <signal.h>

/* Makes SIGTERM (Kubernetes stopping the pod) and SIGINT (Ctrl-C) call handler, which should only set
 * a flag that the program's loop reads. Without SA_RESTART, so that a blocking call such as a read of
 * standard input returns EINTR and the loop sees the flag at once. */
void sig_on_stop(void (*handler)(int));

/* Sets *set to exactly those signals (for sigwait, or to block them in threads that must not take
 * them). */
void sig_stop_set(sigset_t *set);

#endif
