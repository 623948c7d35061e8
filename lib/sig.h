/* sig.h: the signals that ask a program to stop. */
#ifndef ZK_SIG_H
#define ZK_SIG_H

/* Makes SIGTERM (Kubernetes stopping the pod) and SIGINT (Ctrl-C) call handler, which should only set
 * a flag that the program's loop reads. Without SA_RESTART, so that a blocking call such as a read of
 * standard input returns EINTR and the loop sees the flag at once. */
void sig_on_stop(void (*handler)(int));

#endif
