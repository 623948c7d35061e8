/* shape.c: see shape.h. */
#include "tests/support/shape.h"

#include "tests/support/fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

static void shape_keys(const cJSON *obj, const cJSON *schema, const char *where)
{
    const cJSON *props = cJSON_GetObjectItem(schema, "properties"), *item, *req;

    cJSON_ArrayForEach(req, cJSON_GetObjectItem(schema, "required")) {
        if (!cJSON_GetObjectItem(obj, req->valuestring))
            fail_msg("%s: required key %s missing", where, req->valuestring);
    }
    cJSON_ArrayForEach(item, obj) {
        const cJSON *p = cJSON_GetObjectItem(props, item->string);

        if (!p)
            fail_msg("%s: key %s is not in the stated shape", where, item->string);
        if (cJSON_IsArray(item) && cJSON_IsObject(cJSON_GetArrayItem(item, 0)))
            shape_keys(cJSON_GetArrayItem(item, 0), cJSON_GetObjectItem(p, "items"), item->string);
    }
}

void shape_check(const cJSON *obj, const char *tool, const char *where)
{
    char name[64];
    size_t len;
    char *text;
    cJSON *shape;

    snprintf(name, sizeof(name), "%s.json", tool);
    text = fixture_read("tests/fixtures/structured", name, &len);
    shape = cJSON_ParseWithLength(text, len);
    free(text);
    if (!shape)
        fail_msg("tests/fixtures/structured/%s does not parse", name);
    assert_non_null(obj);
    shape_keys(obj, shape, where);
    cJSON_Delete(shape);
}
