/* jb.c: see jb.h. */
#include "jb.h"

#include "mem.h"

/* Records whether node exists and returns it. */
static cJSON *jb_check(struct jb *b, cJSON *node)
{
    if (!node)
        b->failed = 1;
    return node;
}

cJSON *jb_object(struct jb *b)
{
    return jb_check(b, cJSON_CreateObject());
}

cJSON *jb_array(struct jb *b)
{
    return jb_check(b, cJSON_CreateArray());
}

cJSON *jb_string(struct jb *b, const char *s)
{
    return jb_check(b, s ? cJSON_CreateString(s) : NULL);
}

cJSON *jb_number(struct jb *b, double v)
{
    return jb_check(b, cJSON_CreateNumber(v));
}

cJSON *jb_add_str(struct jb *b, cJSON *obj, const char *key, const char *value)
{
    return jb_check(b, obj && value ? cJSON_AddStringToObject(obj, key, value) : NULL);
}

cJSON *jb_add_num(struct jb *b, cJSON *obj, const char *key, double value)
{
    return jb_check(b, obj ? cJSON_AddNumberToObject(obj, key, value) : NULL);
}

cJSON *jb_add_bool(struct jb *b, cJSON *obj, const char *key, int value)
{
    return jb_check(b, obj ? cJSON_AddBoolToObject(obj, key, value) : NULL);
}

cJSON *jb_add_obj(struct jb *b, cJSON *obj, const char *key)
{
    return jb_check(b, obj ? cJSON_AddObjectToObject(obj, key) : NULL);
}

cJSON *jb_add_arr(struct jb *b, cJSON *obj, const char *key)
{
    return jb_check(b, obj ? cJSON_AddArrayToObject(obj, key) : NULL);
}

void jb_add(struct jb *b, cJSON *obj, const char *key, cJSON *item)
{
    if (!obj || !item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        b->failed = 1;
    }
}

void jb_push(struct jb *b, cJSON *arr, cJSON *item)
{
    if (!arr || !item || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        b->failed = 1;
    }
}

void jb_set(struct jb *b, cJSON *obj, const char *key, cJSON *item)
{
    cJSON *old = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

    if (!old || !item) {
        jb_add(b, obj, key, item);
        return;
    }
    /* The item takes the name of the member it replaces; cJSON frees names with free(), which is what
     * lib/mem's memory is freed with too. */
    if (!(item->type & cJSON_StringIsConst))
        cJSON_free(item->string);
    item->type &= ~cJSON_StringIsConst;
    item->string = mem_strdup(key);
    cJSON_ReplaceItemViaPointer(obj, old, item); /* fails only for NULL arguments, excluded above */
}

cJSON *jb_finish(struct jb *b, cJSON *root)
{
    if (b->failed || !root) {
        cJSON_Delete(root);
        b->failed = 1;
        return NULL;
    }
    return root;
}
