/* assets.h: files embedded into the controller by assets.S. The bytes are not NUL-terminated: use the
 * length, which the assembler computed. */
#ifndef ZK_ASSETS_H
#define ZK_ASSETS_H

#include <stddef.h>

/* assets.S writes each length as a .quad. */
_Static_assert(sizeof(size_t) == 8, "assets.S emits the asset lengths as 8-byte values");

extern const char assets_indexer_sh_start[];
extern const size_t assets_indexer_sh_len;
extern const char assets_nginx_conf_start[];
extern const size_t assets_nginx_conf_len;

#define ASSETS_INDEXER_SH assets_indexer_sh_start
#define ASSETS_INDEXER_SH_LEN assets_indexer_sh_len
#define ASSETS_NGINX_CONF assets_nginx_conf_start
#define ASSETS_NGINX_CONF_LEN assets_nginx_conf_len

#endif
