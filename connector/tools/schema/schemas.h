/* schemas.h: the tools' declarations, embedded by schemas.S from the JSON files beside it. The bytes
 * are not NUL-terminated: use the length, which the assembler computed. */
#ifndef ZK_CONNECTOR_TOOLS_SCHEMAS_H
#define ZK_CONNECTOR_TOOLS_SCHEMAS_H

#include <stddef.h>

/* schemas.S writes each length as a .quad. */
_Static_assert(sizeof(size_t) == 8, "schemas.S emits the lengths as 8-byte values");

#define SCHEMA_DECLARE(name)                 \
    extern const char schema_##name##_start[]; \
    extern const size_t schema_##name##_len;

SCHEMA_DECLARE(search_code)
SCHEMA_DECLARE(list_repositories)
SCHEMA_DECLARE(read_file)
SCHEMA_DECLARE(list_files)
SCHEMA_DECLARE(find_references)
SCHEMA_DECLARE(find_symbol)
SCHEMA_DECLARE(find_dependents)
SCHEMA_DECLARE(corpus_status)

#undef SCHEMA_DECLARE

#endif
