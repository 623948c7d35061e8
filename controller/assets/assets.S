/* assets.S: embeds the indexer script and the nginx.conf template into the controller at build time,
 * so the files under controller/assets/ stay real, testable files and the binary needs nothing at run
 * time. Each asset is a start symbol and a length that the assembler computes from a local end label,
 * so C never has to subtract the addresses of two different objects; see assets.h. */
    .section .rodata
    .global assets_indexer_sh_start
assets_indexer_sh_start:
    .incbin "controller/assets/indexer.sh"
.Lindexer_sh_end:

    .global assets_nginx_conf_start
assets_nginx_conf_start:
    .incbin "controller/assets/nginx.conf"
.Lnginx_conf_end:

    .balign 8
    .global assets_indexer_sh_len
assets_indexer_sh_len:
    .quad .Lindexer_sh_end - assets_indexer_sh_start
    .global assets_nginx_conf_len
assets_nginx_conf_len:
    .quad .Lnginx_conf_end - assets_nginx_conf_start

    .section .note.GNU-stack,"",@progbits
