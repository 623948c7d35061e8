/* json.c: see json.h. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

const char *json_str(const cJSON *obj, const char *key, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

double json_num(const cJSON *obj, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

long long json_int(const cJSON *obj, const char *key, long long def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    /* cJSON keeps numbers as doubles; values beyond 2^53 lose precision, which no field we read has.
     * A value outside long long's range (or NaN) cannot be converted at all (the cast would be undefined
     * behaviour), so hostile input such as 3e113 gets the default. */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= -9223372036854775808.0 && v->valuedouble < 9223372036854775808.0))
        return def;
    return (long long)v->valuedouble;
}

int json_bool(const cJSON *obj, const char *key, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

const cJSON *json_obj(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *json_arr(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    return cJSON_IsArray(v) ? v : NULL;
}

const cJSON *json_path(const cJSON *root, const char *path)
{
    const cJSON *cur = root;
    char key[256];

    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);

        if (n >= sizeof(key) || !cJSON_IsObject(cur))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        path += n + (dot ? 1 : 0);
    }
    return cur;
}

const char *json_path_str(const cJSON *root, const char *path, const char *def)
{
    const cJSON *v = json_path(root, path);

    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

cJSON *json_parse(const char *data, size_t len)
{
    return cJSON_ParseWithLength(data, len);
}

char *json_print(const cJSON *node)
{
    return cJSON_PrintUnformatted(node);
}
