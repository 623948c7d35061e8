/* schemas.S: embeds each tool's declaration (connector/tools/schema/<tool>.json: name, description,
 * inputSchema, annotations) into the connector at build time, so that the declarations stay JSON files
 * a reviewer and a test read as they are, not escaped C strings. Each is a start symbol and a length
 * computed by the assembler from a local end label; see schemas.h. */
    .section .rodata
/* One declaration: schema_<name>_start, the bytes, and schema_<name>_len. */
    .macro schema name
    .global schema_\name\()_start
schema_\name\()_start:
    .incbin "connector/tools/schema/\name\().json"
.Lend_\name:
    .balign 8
    .global schema_\name\()_len
schema_\name\()_len:
    .quad .Lend_\name - schema_\name\()_start
    .endm

    schema search_code
    schema list_repositories
    schema read_file
    schema list_files
    schema find_references
    schema find_symbol
    schema find_dependents
    schema corpus_status

    .section .note.GNU-stack,"",@progbits
