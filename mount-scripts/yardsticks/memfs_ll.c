/* memfs_ll — memfs (a flat in-memory filesystem) on libfuse3's low-level
 * (inode) API, tuned so that the kernel asks the daemon as little as FUSE
 * allows: the yardstick for the fewest round trips a filesystem of keys can
 * get away with.
 *
 *   memfs_ll [-f] [-s] [-d] [-o FUSE_OPTIONS] MOUNTPOINT   (unmount: fusermount3 -u MOUNTPOINT)
 *
 * The tuning (fixed; each choice stays correct for a store whose values also
 * change from elsewhere, provided the daemon tells the kernel of each change
 * with notify_inval_inode / notify_inval_entry, as kvfs does):
 *   - names, missing names and attributes are cached for an hour;
 *   - OPEN is answered ENOSYS, once: the kernel then opens files itself and
 *     sends no OPEN or RELEASE again. An O_TRUNC open then arrives as a
 *     SETATTR of the size, because atomic O_TRUNC is switched off;
 *   - FLUSH is not implemented, so the kernel stops sending it after the first;
 *   - page cache kept across opens (keep_cache), and dropped only when the
 *     daemon says so (EXPLICIT_INVAL_DATA instead of AUTO_INVAL_DATA).
 * Requests left: create = LOOKUP + CREATE + WRITE; rewrite with O_TRUNC =
 * SETATTR + WRITE; first read = GETATTR + READ; a second read = none;
 * readdir = OPENDIR + READDIRs; unlink = UNLINK.
 *
 * Built by mount-scripts/benchmark.sh:
 *   cc -O2 -Wall memfs_ll.c $(pkg-config --cflags --libs fuse3) -o memfs_ll */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const double cache_seconds = 3600;
static int kernel_opens_files;   /* the kernel offered no-OPEN mode, and we took it */

/* Inode 1 is the folder; inode n >= 2 is nodes[n - 2]. A node stays in use
 * while it has a name or the kernel still holds lookups of it, so that a
 * removed file stays readable through the descriptors open on it. */
enum { capacity = 4096, bucket_count = 8192 };
static struct node {
    char *name;                 /* NULL once unlinked */
    char *bytes;
    size_t size;
    uint64_t lookups;           /* the kernel's references (LOOKUP/CREATE minus FORGET) */
    struct timespec modified;
    struct node *next_in_bucket;
} nodes[capacity];
static struct node *buckets[bucket_count];   /* names, hashed */
static int nodes_in_use;                     /* an upper bound: nodes past it were never used */
static struct timespec folder_modified;
static pthread_mutex_t nodes_lock = PTHREAD_MUTEX_INITIALIZER;

/* Everything below until the request handlers: call with nodes_lock held. */

static struct node **bucket_of(const char *name) {
    uint32_t hash = 2166136261u;   /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) hash = (hash ^ *c) * 16777619u;
    return &buckets[hash % bucket_count];
}

static struct node *named(const char *name) {
    struct node *n = *bucket_of(name);
    while (n && strcmp(n->name, name) != 0) n = n->next_in_bucket;
    return n;
}

static fuse_ino_t inode_of(const struct node *n) { return (fuse_ino_t)(n - nodes) + 2; }
static struct node *node_of(fuse_ino_t inode) { return &nodes[inode - 2]; }

static void now(struct timespec *t) { clock_gettime(CLOCK_REALTIME, t); }

/* A new file of that name, or NULL when every node is in use or memory is out. */
static struct node *add_file(const char *name) {
    struct node *n = nodes;
    while (n < nodes + capacity && (n->name || n->lookups)) n++;
    char *copy = n < nodes + capacity ? strdup(name) : NULL;
    if (!copy) return NULL;
    struct node **bucket = bucket_of(name);
    *n = (struct node){ .name = copy, .next_in_bucket = *bucket };
    *bucket = n;
    if (n - nodes >= nodes_in_use) nodes_in_use = (int)(n - nodes) + 1;
    now(&n->modified);
    folder_modified = n->modified;
    return n;
}

/* Frees the bytes of a node that has neither a name nor the kernel's references. */
static void release_if_unused(struct node *n) {
    if (n->name || n->lookups) return;
    free(n->bytes);
    n->bytes = NULL;
    n->size = 0;
}

static void remove_name(struct node *n) {
    struct node **link = bucket_of(n->name);
    while (*link != n) link = &(*link)->next_in_bucket;
    *link = n->next_in_bucket;
    free(n->name);
    n->name = NULL;
    now(&folder_modified);
    release_if_unused(n);
}

/* Sets the size, zero-filling what grows. Returns 0 or an errno. */
static int set_size(struct node *n, size_t size) {
    char *bytes = realloc(n->bytes, size > 0 ? size : 1);
    if (!bytes) return ENOMEM;
    if (size > n->size) memset(bytes + n->size, 0, size - n->size);
    n->bytes = bytes;
    n->size = size;
    now(&n->modified);
    return 0;
}

static struct stat attributes(fuse_ino_t inode) {
    struct stat st = { .st_ino = inode, .st_uid = getuid(), .st_gid = getgid() };
    if (inode == FUSE_ROOT_ID) {
        st.st_mode = S_IFDIR | 0755;
        st.st_nlink = 2;
        st.st_mtim = st.st_ctim = folder_modified;
        return st;
    }
    const struct node *n = node_of(inode);
    st.st_mode = S_IFREG | 0644;
    st.st_nlink = n->name ? 1 : 0;
    st.st_size = (off_t)n->size;
    st.st_blocks = (blkcnt_t)((n->size + 511) / 512);
    st.st_mtim = st.st_ctim = n->modified;
    return st;
}

/* An entry reply for n, counting the kernel's new reference; for NULL, a
 * cached "no such name". */
static struct fuse_entry_param entry_for(struct node *n) {
    struct fuse_entry_param e = { .attr_timeout = cache_seconds, .entry_timeout = cache_seconds };
    if (n) {
        n->lookups++;
        e.ino = inode_of(n);
        e.attr = attributes(e.ino);
    }
    return e;
}

static void forget_references(fuse_ino_t inode, uint64_t count) {
    if (inode == FUSE_ROOT_ID) return;
    struct node *n = node_of(inode);
    n->lookups -= count;
    release_if_unused(n);
}

/* The request handlers. */

static void on_init(void *userdata, struct fuse_conn_info *connection) {
    (void)userdata;
    kernel_opens_files = (connection->capable & FUSE_CAP_NO_OPEN_SUPPORT) != 0;
    if (kernel_opens_files) connection->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
    if (connection->capable & FUSE_CAP_EXPLICIT_INVAL_DATA) {
        connection->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
        connection->want |= FUSE_CAP_EXPLICIT_INVAL_DATA;
    }
}

static void on_lookup(fuse_req_t request, fuse_ino_t parent, const char *name) {
    pthread_mutex_lock(&nodes_lock);
    struct fuse_entry_param e = entry_for(parent == FUSE_ROOT_ID ? named(name) : NULL);
    pthread_mutex_unlock(&nodes_lock);
    fuse_reply_entry(request, &e);
}

static void on_forget(fuse_req_t request, fuse_ino_t inode, uint64_t count) {
    pthread_mutex_lock(&nodes_lock);
    forget_references(inode, count);
    pthread_mutex_unlock(&nodes_lock);
    fuse_reply_none(request);
}

static void on_forget_multi(fuse_req_t request, size_t count, struct fuse_forget_data *forgets) {
    pthread_mutex_lock(&nodes_lock);
    for (size_t i = 0; i < count; i++) forget_references(forgets[i].ino, forgets[i].nlookup);
    pthread_mutex_unlock(&nodes_lock);
    fuse_reply_none(request);
}

static void on_getattr(fuse_req_t request, fuse_ino_t inode, struct fuse_file_info *fi) {
    (void)fi;
    pthread_mutex_lock(&nodes_lock);
    struct stat st = attributes(inode);
    pthread_mutex_unlock(&nodes_lock);
    fuse_reply_attr(request, &st, cache_seconds);
}

/* Size and mtime change; mode, owner and atime are accepted and ignored. */
static void on_setattr(fuse_req_t request, fuse_ino_t inode, struct stat *wanted, int fields,
                       struct fuse_file_info *fi) {
    (void)fi;
    int error = 0;
    pthread_mutex_lock(&nodes_lock);
    if (inode != FUSE_ROOT_ID) {
        struct node *n = node_of(inode);
        if (fields & FUSE_SET_ATTR_SIZE) error = set_size(n, (size_t)wanted->st_size);
        if (fields & FUSE_SET_ATTR_MTIME_NOW) now(&n->modified);
        else if (fields & FUSE_SET_ATTR_MTIME) n->modified = wanted->st_mtim;
    }
    struct stat st = attributes(inode);
    pthread_mutex_unlock(&nodes_lock);
    if (error) fuse_reply_err(request, error);
    else fuse_reply_attr(request, &st, cache_seconds);
}

/* Directory offsets: 0 is ".", 1 is "..", 2 + i is nodes[i]. */
static void on_readdir(fuse_req_t request, fuse_ino_t inode, size_t size, off_t offset,
                       struct fuse_file_info *fi) {
    (void)inode; (void)fi;
    char *buffer = malloc(size);
    if (!buffer) {
        fuse_reply_err(request, ENOMEM);
        return;
    }
    size_t used = 0;
    pthread_mutex_lock(&nodes_lock);
    for (off_t i = offset; i < nodes_in_use + 2; i++) {
        const char *name = i == 0 ? "." : i == 1 ? ".." : nodes[i - 2].name;
        if (!name) continue;
        struct stat st = { .st_ino = i < 2 ? FUSE_ROOT_ID : (fuse_ino_t)i,
                           .st_mode = i < 2 ? S_IFDIR : S_IFREG };
        size_t needed = fuse_add_direntry(request, buffer + used, size - used, name, &st, i + 1);
        if (needed > size - used) break;
        used += needed;
    }
    pthread_mutex_unlock(&nodes_lock);
    fuse_reply_buf(request, buffer, used);
    free(buffer);
}

static void on_create(fuse_req_t request, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi) {
    (void)parent; (void)mode;
    int error = 0;
    pthread_mutex_lock(&nodes_lock);
    struct node *n = named(name);
    if (n && (fi->flags & O_EXCL)) error = EEXIST;
    else if (n && (fi->flags & O_TRUNC)) error = set_size(n, 0);
    else if (!n && !(n = add_file(name))) error = ENOSPC;
    struct fuse_entry_param e = error ? (struct fuse_entry_param){ 0 } : entry_for(n);
    pthread_mutex_unlock(&nodes_lock);
    fi->keep_cache = 1;
    if (error) fuse_reply_err(request, error);
    else fuse_reply_create(request, &e, fi);
}

static void on_open(fuse_req_t request, fuse_ino_t inode, struct fuse_file_info *fi) {
    if (kernel_opens_files) {
        fuse_reply_err(request, ENOSYS);   /* never asked again */
        return;
    }
    int error = 0;
    if (fi->flags & O_TRUNC) {
        pthread_mutex_lock(&nodes_lock);
        error = set_size(node_of(inode), 0);
        pthread_mutex_unlock(&nodes_lock);
    }
    fi->keep_cache = 1;
    if (error) fuse_reply_err(request, error);
    else fuse_reply_open(request, fi);
}

static void on_opendir(fuse_req_t request, fuse_ino_t inode, struct fuse_file_info *fi) {
    (void)inode;
    fuse_reply_open(request, fi);
}

static void on_read(fuse_req_t request, fuse_ino_t inode, size_t count, off_t offset,
                    struct fuse_file_info *fi) {
    (void)fi;
    pthread_mutex_lock(&nodes_lock);
    const struct node *n = node_of(inode);
    size_t available = (size_t)offset < n->size ? n->size - (size_t)offset : 0;
    size_t length = available < count ? available : count;
    fuse_reply_buf(request, length ? n->bytes + offset : NULL, length);   /* copies before we unlock */
    pthread_mutex_unlock(&nodes_lock);
}

static void on_write(fuse_req_t request, fuse_ino_t inode, const char *buffer, size_t count,
                     off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    int error = 0;
    pthread_mutex_lock(&nodes_lock);
    struct node *n = node_of(inode);
    if ((size_t)offset + count > n->size) error = set_size(n, (size_t)offset + count);
    if (!error) {
        memcpy(n->bytes + offset, buffer, count);
        now(&n->modified);
    }
    pthread_mutex_unlock(&nodes_lock);
    if (error) fuse_reply_err(request, error);
    else fuse_reply_write(request, count);
}

static void on_unlink(fuse_req_t request, fuse_ino_t parent, const char *name) {
    (void)parent;
    pthread_mutex_lock(&nodes_lock);
    struct node *n = named(name);
    if (n) remove_name(n);
    pthread_mutex_unlock(&nodes_lock);
    fuse_reply_err(request, n ? 0 : ENOENT);
}

/* No flush, release, releasedir or statfs: libfuse answers those itself
 * (ENOSYS for flush, success for the releases, empty defaults for statfs). */
static const struct fuse_lowlevel_ops operations = {
    .init = on_init,
    .lookup = on_lookup,
    .forget = on_forget,
    .forget_multi = on_forget_multi,
    .getattr = on_getattr,
    .setattr = on_setattr,
    .readdir = on_readdir,
    .create = on_create,
    .open = on_open,
    .opendir = on_opendir,
    .read = on_read,
    .write = on_write,
    .unlink = on_unlink,
};

int main(int argc, char **argv) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts options;
    if (fuse_parse_cmdline(&args, &options) != 0) return 1;
    if (options.show_help || !options.mountpoint) {
        fprintf(stderr, "usage: %s [-f] [-s] [-d] [-o FUSE_OPTIONS] MOUNTPOINT\n", argv[0]);
        return options.show_help ? 0 : 1;
    }
    now(&folder_modified);
    int failed = 1;
    struct fuse_session *session = fuse_session_new(&args, &operations, sizeof operations, NULL);
    if (session && fuse_set_signal_handlers(session) == 0) {
        if (fuse_session_mount(session, options.mountpoint) == 0) {
            fuse_daemonize(options.foreground);
            if (options.singlethread) {
                failed = fuse_session_loop(session);
            } else {
                struct fuse_loop_config *loop = fuse_loop_cfg_create();
                fuse_loop_cfg_set_clone_fd(loop, options.clone_fd);
                fuse_loop_cfg_set_max_threads(loop, options.max_threads);
                failed = fuse_session_loop_mt(session, loop);
                fuse_loop_cfg_destroy(loop);
            }
            fuse_session_unmount(session);
        }
        fuse_remove_signal_handlers(session);
    }
    if (session) fuse_session_destroy(session);
    free(options.mountpoint);
    fuse_opt_free_args(&args);
    return failed ? 1 : 0;
}
