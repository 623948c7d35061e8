/* api.c: see api.h. */
#include "controller/corpus/api.h"

#include "json.h"

#include <stdio.h>
#include <string.h>

const struct kube_resource api_corpus_resource = {API_GROUP, API_VERSION, API_PLURAL, API_KIND, 1};

const cJSON *api_corpus_owner(const cJSON *obj)
{
    const cJSON *ref;

    cJSON_ArrayForEach(ref, json_path(obj, "metadata.ownerReferences")) {
        if (json_bool(ref, "controller", 0) && strcmp(json_str(ref, "kind", ""), API_KIND) == 0 &&
            strncmp(json_str(ref, "apiVersion", ""), API_GROUP "/", strlen(API_GROUP "/")) == 0)
            return ref;
    }
    return NULL;
}

int api_corpus_key(const cJSON *obj, char *key, size_t len)
{
    const cJSON *labels;
    const char *ns = json_path_str(obj, "metadata.namespace", "");
    const char *name = json_str(api_corpus_owner(obj), "name", NULL);
    int n;

    if (!name) {
        /* The annotation holds the full name; the label only names corpora of up to 63 characters
         * (older objects were rendered without the annotation). */
        labels = json_path(obj, "metadata.labels");
        if (strcmp(json_str(labels, API_LABEL_MANAGED_BY, ""), API_MANAGER) == 0) {
            name = json_str(json_path(obj, "metadata.annotations"), API_ANN_CORPUS, NULL);
            if (!name)
                name = json_str(labels, API_LABEL_INSTANCE, NULL);
        }
    }
    if (!name || !*name)
        return 0;
    n = snprintf(key, len, "%s/%s", ns, name);
    return n > 0 && (size_t)n < len;
}
