/* fakeapi.h: a scripted stand-in for the Kubernetes API server on a loopback port, for the unit tests
 * of code that talks to one (informers, leader election, reconcile).
 *
 * The test answers every ordinary request with its handler (status and body); a request it does not
 * answer gets 404 with a NotFound Status. Watch requests (?watch=...) are the fake's own: each is a
 * stream that stays open and carries, in order, every line the test pushed for that path with
 * fakeapi_push, until fakeapi_stop. The fake records each request ("METHOD /path" and its body) so a
 * test can ask what was sent. Requests are served on threads of the fake's own; the functions here
 * may be called from any thread. For cmocka tests: setup failures fail the running test. */
#ifndef ZK_TESTS_FAKEAPI_H
#define ZK_TESTS_FAKEAPI_H

#include "kube/client.h"

#include <stddef.h>

struct fakeapi_request {
    const char *method; /* "GET", "PUT", ... */
    const char *path;   /* without the query */
    const char *body;   /* "" when none */
    const char *query;  /* the query's arguments as "k=v&k2=v2", decoded; "" when none */
};

/* Writes the answer's body (JSON) into out (len bytes) and returns the HTTP status; 0 leaves the
 * request to the fake (404). Called from a server thread. */
typedef int fakeapi_handler_fn(void *ud, const struct fakeapi_request *rq, char *out, size_t len);

struct fakeapi;

/* Starts the fake on a free loopback port; handler may be NULL (everything is 404). */
struct fakeapi *fakeapi_start(fakeapi_handler_fn *handler, void *ud);

/* A client for the fake, owned by the caller (kube_client_free). */
struct kube_client *fakeapi_client(struct fakeapi *f);

/* "http://127.0.0.1:PORT". */
const char *fakeapi_url(const struct fakeapi *f);

/* Appends one watch event line (a JSON object, without the newline) to the stream of path, e.g.
 * "/api/v1/namespaces/ns/configmaps". Watches of that path receive it, and those opened later too. */
void fakeapi_push(struct fakeapi *f, const char *path, const char *line);

/* How many requests were "METHOD path" with path starting with prefix. */
int fakeapi_count(struct fakeapi *f, const char *method, const char *prefix);

/* A heap copy (caller frees) of the body of the last such request, or NULL when there was none. */
char *fakeapi_last_body(struct fakeapi *f, const char *method, const char *prefix);

/* Ends every watch stream and stops the server. Stop the clients' watches first. */
void fakeapi_stop(struct fakeapi *f);

/* Waits up to secs for cond(ud) to hold, polling every 10 ms; returns whether it did. */
int fakeapi_wait_for(int (*cond)(void *ud), void *ud, double secs);

#endif
