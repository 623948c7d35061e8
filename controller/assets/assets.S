/* assets.S: embeds the indexer script and the nginx.conf template into the controller at build time,
 * so the files under controller/assets/ stay real, testable files and the binary needs nothing at run
 * time. Each asset is bracketed by a start and an end symbol; see assets.h. */
    .section .rodata
    .global assets_indexer_sh_start
    .global assets_indexer_sh_end
assets_indexer_sh_start:
    .incbin "controller/assets/indexer.sh"
assets_indexer_sh_end:

    .global assets_nginx_conf_start
    .global assets_nginx_conf_end
assets_nginx_conf_start:
    .incbin "controller/assets/nginx.conf"
assets_nginx_conf_end:

    .section .note.GNU-stack,"",@progbits
