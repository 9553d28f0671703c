/* The commit kvfs was built from, baked in without a file that git tracks
 * changing: mount-scripts/build.sh writes commit.h beside BuildInfo.c for
 * the length of its build (commit.h is in .gitignore), so a plain
 * `swift build` leaves it out and says "unknown commit". A C target because
 * Swift's -D defines carry no values. */
#ifndef KVFS_BUILD_INFO_H
#define KVFS_BUILD_INFO_H

/// The commit as `git describe --always --dirty` printed it, or "unknown commit".
const char *kvfs_build_commit(void);

#endif
