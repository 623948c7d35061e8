/* jb.h: building cJSON trees with one sticky failure flag.
 *
 * Code that builds an object (a rendered child, a Lease, an Event, a status) should read like the
 * object it describes, one member per line, without a check after each. Memory is not what can fail:
 * the programs make cJSON allocate through lib/mem (mem_setup), which ends the process when memory
 * runs out. What the flag catches is a value that is missing: a NULL string (cJSON has no string node
 * without text), a NULL item (a cJSON_Duplicate or cJSON_Parse that gave nothing), and the NULL parents
 * those lead to. Every function accepts them harmlessly and only sets the flag, and so does any NULL a
 * cJSON constructor returns (which, with cJSON's default allocator, a test may see). The one check
 * comes at the end, in jb_finish, which never returns a partial tree: written to the API server, an
 * object with members missing would remove those fields (a Lease without its holder, a Deployment
 * without its volumes).
 *
 * A builder is one struct jb, zeroed ({0}) before the first call, used from one thread. Items passed
 * to jb_add and jb_push belong to the builder's tree from then on: when they cannot be added they are
 * freed. */
#ifndef ZK_JB_H
#define ZK_JB_H

#include <cjson/cJSON.h>

struct jb {
    int failed; /* set by the first missing value or node; never cleared */
};

/* New detached nodes; NULL (and the flag set) only for a NULL s. */
cJSON *jb_object(struct jb *b);
cJSON *jb_array(struct jb *b);
cJSON *jb_string(struct jb *b, const char *s);
cJSON *jb_number(struct jb *b, double v);

/* Add a member to obj and return it (NULL, flag set, when obj is NULL). A NULL string value counts as
 * a failure, as cJSON has no string node without text. */
cJSON *jb_add_str(struct jb *b, cJSON *obj, const char *key, const char *value);
cJSON *jb_add_num(struct jb *b, cJSON *obj, const char *key, double value);
cJSON *jb_add_bool(struct jb *b, cJSON *obj, const char *key, int value);
cJSON *jb_add_obj(struct jb *b, cJSON *obj, const char *key);
cJSON *jb_add_arr(struct jb *b, cJSON *obj, const char *key);

/* Adds item (taken over: freed when it cannot be added) as obj's member key. */
void jb_add(struct jb *b, cJSON *obj, const char *key, cJSON *item);

/* Appends item (taken over, likewise) to arr. */
void jb_push(struct jb *b, cJSON *arr, cJSON *item);

/* Sets obj's member key to item (taken over), replacing a member of that name or adding one. */
void jb_set(struct jb *b, cJSON *obj, const char *key, cJSON *item);

/* Returns root when nothing failed since the builder was zeroed; otherwise frees root and returns NULL,
 * so a caller either holds the whole tree or nothing. */
cJSON *jb_finish(struct jb *b, cJSON *root);

#endif
