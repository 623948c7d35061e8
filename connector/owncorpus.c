/* owncorpus.c: see owncorpus.h. */
#include "connector/owncorpus.h"

#include "kube/config.h"

#include <string.h>

static const struct kube_resource owncorpus_resource = {"codesearch.dev", "v1alpha1", "codesearchcorpora",
                                                         "CodeSearchCorpus", 1};

/* Loads the configuration and makes a client of it into *out (the caller frees it, also on failure). */
static int owncorpus_client(const struct owncorpus *c, struct kube_client **out, struct kube_err *err)
{
    struct kube_config kc;
    struct zk_err zerr = {0};
    int rc;

    *out = NULL;
    kube_err_clear(err);
    memset(&kc, 0, sizeof(kc));
    rc = kube_config_load(c->kubeconfig, NULL, &kc, &zerr);
    if (rc)
        return zk_err_set(&err->base, rc, "no Kubernetes configuration: %s", zerr.msg);
    rc = kube_client_new(&kc, OWNCORPUS_TIMEOUT_MS, out, &err->base);
    kube_config_free(&kc);
    return rc;
}

int owncorpus_get(const struct owncorpus *c, cJSON **out, struct kube_err *err)
{
    struct kube_client *client = NULL;
    int rc = owncorpus_client(c, &client, err);

    *out = NULL;
    if (!rc)
        rc = kube_get(client, &owncorpus_resource, c->namespace, c->name, out, err);
    kube_client_free(client);
    return rc;
}

int owncorpus_annotate(const struct owncorpus *c, const char *key, const char *value, struct kube_err *err)
{
    struct kube_client *client = NULL;
    cJSON *patch = cJSON_CreateObject();
    int rc = owncorpus_client(c, &client, err);

    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations"), key,
                            value);
    if (!rc)
        rc = kube_merge_patch(client, &owncorpus_resource, c->namespace, c->name, NULL, patch, NULL, err);
    cJSON_Delete(patch);
    kube_client_free(client);
    return rc;
}
