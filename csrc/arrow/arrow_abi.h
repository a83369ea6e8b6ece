/*
 * The Arrow C data interface (https://arrow.apache.org/docs/format/CDataInterface.html
 * and CStreamInterface.html): a published, stable ABI, written here from the
 * specification so that utf8pfx reads and produces Arrow arrays without any
 * run-time dependency.  The guards are the specification's own, so a
 * translation unit that also includes another copy of these structs (Arrow's
 * abi.h, nanoarrow.h) sees one definition.
 *
 * PyCapsule names (the Arrow PyCapsule interface): "arrow_schema",
 * "arrow_array", "arrow_array_stream".  A capsule's destructor calls the
 * struct's release callback unless a consumer has moved the struct out (a
 * consumer moves by copying the struct and setting the original's release
 * to NULL), then frees the struct.
 */
#ifndef UTF8PFX_ARROW_H
#define UTF8PFX_ARROW_H

#include <stdint.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

#endif /* UTF8PFX_ARROW_H */
