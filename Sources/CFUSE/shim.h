/* The only C in kvfs: what Swift cannot reach in libfuse3 by itself.
 *
 * That is just the API version macro. Everything else imports as is
 * (checked with Swift 6.3 against libfuse 3.14):
 *  - fuse_file_info's bit-fields (keep_cache, direct_io, noflush,
 *    nonseekable, cache_readdir, flush, writepage) import as read/write
 *    UInt32 properties;
 *  - FUSE_SET_ATTR_* and FUSE_CAP_* are plain integer macros and import as
 *    constants;
 *  - FUSE_ARGS_INIT is `fuse_args(argc:argv:allocated: 0)`;
 *  - fuse_session_loop_mt is a real (versioned) symbol, not a macro, because
 *    this libfuse is built with LIBFUSE_BUILT_WITH_VERSIONED_SYMBOLS.
 * So there are no wrappers here, and no logic. */
#ifndef KVFS_CFUSE_SHIM_H
#define KVFS_CFUSE_SHIM_H
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#endif
