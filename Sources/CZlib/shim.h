// zlib, for gzip request bodies (courier) and their decoding (the sink).
// deflateInit2 and inflateInit2 are macros; these wrappers make them callable.
#ifndef COURIER_CZLIB_SHIM_H
#define COURIER_CZLIB_SHIM_H

#include <zlib.h>

static inline int courier_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

static inline int courier_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}

#endif
