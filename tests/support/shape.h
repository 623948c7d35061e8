/* shape.h: whether a tool's structuredContent has the shape tests/fixtures/structured/<tool>.json
 * states (a JSON Schema the tool catalogue no longer carries: docs/connector.md). */
#ifndef ZK_TESTS_SHAPE_H
#define ZK_TESTS_SHAPE_H

#include <cjson/cJSON.h>

/* Fails the running test, naming where, unless every key of obj is a property the stated shape of
 * tool's structuredContent has and every required one is there, into the first object of each array
 * of objects. */
void shape_check(const cJSON *obj, const char *tool, const char *where);

#endif
