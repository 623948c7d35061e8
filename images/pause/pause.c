/*
 * pause: the process that holds a pod's namespaces on the local test node (scripts/node.sh), built
 * statically into the node's sandbox image by scripts/images.sh, since no registry can supply one.
 *
 * It sleeps until asked to stop. When a pod shares its PID namespace this process is PID 1 there,
 * so it also reaps the orphans handed to it, as the kubelet expects of a sandbox.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void pause_stop(int sig)
{
    (void)sig;
    _exit(0);
}

static void pause_reap(int sig)
{
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int main(void)
{
    struct sigaction stop = {.sa_handler = pause_stop};
    struct sigaction reap = {.sa_handler = pause_reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};

    if (sigaction(SIGINT, &stop, NULL) != 0 || sigaction(SIGTERM, &stop, NULL) != 0 ||
        sigaction(SIGCHLD, &reap, NULL) != 0)
        return 1;
    for (;;)
        pause();
}
