#include "KVFSBuildInfo.h"

#if __has_include("commit.h")
#include "commit.h"
#endif
#ifndef KVFS_COMMIT
#define KVFS_COMMIT "unknown commit"
#endif

const char *kvfs_build_commit(void) { return KVFS_COMMIT; }
