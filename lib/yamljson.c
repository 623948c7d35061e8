/* yamljson.c: see yamljson.h. */
#include "yamljson.h"

#include "mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Resolves a scalar: quoted ones are strings; plain ones may be null, a boolean or a number. */
static cJSON *yamljson_scalar(const char *s, int plain)
{
    char *end;
    double d;

    if (!plain)
        return cJSON_CreateString(s);
    if (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
        return cJSON_CreateNull();
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
        return cJSON_CreateTrue();
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
        return cJSON_CreateFalse();
    if (strspn(s, "+-0123456789.eE") == strlen(s) && strpbrk(s, "0123456789")) {
        errno = 0;
        d = strtod(s, &end);
        if (*end == '\0' && errno == 0)
            return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(s);
}

/* Converts node and what it holds; a malformed document returns NULL with ZK_EINVAL in err. cJSON
 * allocates through lib/mem (mem_setup), so its constructors do not return NULL. */
static cJSON *yamljson_node(yaml_document_t *doc, yaml_node_t *node, int depth, struct zk_err *err)
{
    cJSON *out = NULL, *v;

    if (!node || depth > YAMLJSON_MAX_DEPTH) {
        zk_err_set(err, ZK_EINVAL, "document nested too deeply");
        return NULL;
    }
    switch (node->type) {
    case YAML_SCALAR_NODE:
        /* libyaml's loader tags every untagged scalar !!str, so the tag cannot tell "2" from
         * !!str 2; plain (unquoted) style is what decides, as in Kubernetes' decoder. */
        return yamljson_scalar((const char *)node->data.scalar.value,
                               node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
    case YAML_SEQUENCE_NODE:
        out = cJSON_CreateArray();
        for (yaml_node_item_t *it = node->data.sequence.items.start; it < node->data.sequence.items.top; it++) {
            if (!(v = yamljson_node(doc, yaml_document_get_node(doc, *it), depth + 1, err)))
                break;
            cJSON_AddItemToArray(out, v);
        }
        break;
    case YAML_MAPPING_NODE:
        out = cJSON_CreateObject();
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);

            if (!k || k->type != YAML_SCALAR_NODE) {
                zk_err_set(err, ZK_EINVAL, "line %lu: mapping keys must be scalars",
                           (unsigned long)node->start_mark.line + 1);
                break;
            }
            if (!(v = yamljson_node(doc, yaml_document_get_node(doc, p->value), depth + 1, err)))
                break;
            cJSON_AddItemToObject(out, (const char *)k->data.scalar.value, v);
        }
        break;
    default:
        zk_err_set(err, ZK_EINVAL, "unsupported YAML node");
        return NULL;
    }
    if (err->code == ZK_EINVAL) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

int yamljson_parse(const char *text, size_t n, cJSON **out, struct zk_err *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    struct zk_err local;
    int rc = ZK_OK;

    *out = NULL;
    if (!err)
        err = &local;
    zk_err_clear(err);
    /* libyaml cannot be given lib/mem's allocator and reports a failed allocation by return code. */
    if (!yaml_parser_initialize(&parser))
        mem_oom(sizeof(parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
    if (!yaml_parser_load(&parser, &doc)) {
        if (parser.error == YAML_MEMORY_ERROR)
            mem_oom(0);
        rc = zk_err_set(err, ZK_EINVAL, "line %lu: %s", (unsigned long)parser.problem_mark.line + 1,
                        parser.problem ? parser.problem : "malformed YAML");
        goto out;
    }
    if (!yaml_document_get_root_node(&doc))
        rc = zk_err_set(err, ZK_EINVAL, "the file holds no document");
    else if (!(*out = yamljson_node(&doc, yaml_document_get_root_node(&doc), 0, err)))
        rc = err->code;
    yaml_document_delete(&doc);
out:
    yaml_parser_delete(&parser);
    return rc;
}
