/* assets.h: files embedded into the controller by assets.S. The bytes are not NUL-terminated: use the
 * length from the start and end symbols. */
#ifndef ZK_ASSETS_H
#define ZK_ASSETS_H

#include <stddef.h>

extern const char assets_indexer_sh_start[];
extern const char assets_indexer_sh_end[];
extern const char assets_nginx_conf_start[];
extern const char assets_nginx_conf_end[];

#define ASSETS_INDEXER_SH assets_indexer_sh_start
#define ASSETS_INDEXER_SH_LEN ((size_t)(assets_indexer_sh_end - assets_indexer_sh_start))
#define ASSETS_NGINX_CONF assets_nginx_conf_start
#define ASSETS_NGINX_CONF_LEN ((size_t)(assets_nginx_conf_end - assets_nginx_conf_start))

#endif
