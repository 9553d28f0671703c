/* memfs — a flat in-memory filesystem on libfuse3's high-level (path) API,
 * with as little code as a filesystem of keys needs: the yardstick for what
 * FUSE itself costs. A key-value filesystem cannot beat it on the same
 * kernel path; what kvfs pays beyond it is what a store does.
 *
 *   memfs [FUSE options] MOUNTPOINT        (unmount: fusermount3 -u MOUNTPOINT)
 *
 * It answers only what a shell session needs of a flat folder of files:
 * getattr, readdir, create, open, read, write, truncate and unlink. Nothing
 * else (rename, mkdir, xattrs, ...): libfuse answers ENOSYS, so `mv` and
 * `sed -i` fail here, and benchmark.sh counts the requests of their attempt.
 * Page cache kept across opens; names and attributes cached for 1 s.
 *
 * Built by mount-scripts/benchmark.sh:
 *   cc -O2 -Wall memfs.c $(pkg-config --cflags --libs fuse3) -o memfs */
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { capacity = 4096 };   /* files; one more is ENOSPC */

/* The files, unordered, searched front to back: a yardstick keeps it simple. */
static struct file { char *name; char *bytes; size_t size; } files[capacity];
static int file_count;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

/* The file at "/NAME", or NULL. Call with files_lock held. */
static struct file *file_at(const char *path) {
    for (struct file *f = files; f < files + file_count; f++)
        if (strcmp(f->name, path + 1) == 0) return f;
    return NULL;
}

/* Sets the size, zero-filling what grows. Returns 0 or a negative errno. */
static int set_size(struct file *f, size_t size) {
    char *bytes = realloc(f->bytes, size > 0 ? size : 1);
    if (!bytes) return -ENOMEM;
    if (size > f->size) memset(bytes + f->size, 0, size - f->size);
    f->bytes = bytes;
    f->size = size;
    return 0;
}

static void *memfs_init(struct fuse_conn_info *connection, struct fuse_config *config) {
    (void)connection;
    config->kernel_cache = 1;
    config->entry_timeout = 1.0;
    config->attr_timeout = 1.0;
    return NULL;
}

static int memfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    if (f) {
        st->st_mode = S_IFREG | 0644;
        st->st_nlink = 1;
        st->st_size = (off_t)f->size;
    }
    pthread_mutex_unlock(&files_lock);
    return f ? 0 : -ENOENT;
}

static int memfs_readdir(const char *path, void *buffer, fuse_fill_dir_t add, off_t offset,
                         struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)path; (void)offset; (void)fi; (void)flags;
    add(buffer, ".", NULL, 0, 0);
    add(buffer, "..", NULL, 0, 0);
    pthread_mutex_lock(&files_lock);
    for (int i = 0; i < file_count; i++) add(buffer, files[i].name, NULL, 0, 0);
    pthread_mutex_unlock(&files_lock);
    return 0;
}

static int memfs_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    (void)mode;
    int result = 0;
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    if (f && (fi->flags & O_TRUNC)) result = set_size(f, 0);
    else if (!f && file_count == capacity) result = -ENOSPC;
    else if (!f) {
        char *name = strdup(path + 1);
        if (name) files[file_count++] = (struct file){ .name = name };
        else result = -ENOMEM;
    }
    pthread_mutex_unlock(&files_lock);
    return result;
}

/* libfuse asks for atomic O_TRUNC, so an O_TRUNC open truncates here. */
static int memfs_open(const char *path, struct fuse_file_info *fi) {
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    int result = !f ? -ENOENT : (fi->flags & O_TRUNC) ? set_size(f, 0) : 0;
    pthread_mutex_unlock(&files_lock);
    return result;
}

static int memfs_read(const char *path, char *buffer, size_t count, off_t offset,
                      struct fuse_file_info *fi) {
    (void)fi;
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    int result = -ENOENT;
    if (f) {
        size_t available = (size_t)offset < f->size ? f->size - (size_t)offset : 0;
        size_t n = available < count ? available : count;
        memcpy(buffer, f->bytes + offset, n);
        result = (int)n;
    }
    pthread_mutex_unlock(&files_lock);
    return result;
}

static int memfs_write(const char *path, const char *buffer, size_t count, off_t offset,
                       struct fuse_file_info *fi) {
    (void)fi;
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    int result = f ? 0 : -ENOENT;
    if (f && (size_t)offset + count > f->size) result = set_size(f, (size_t)offset + count);
    if (result == 0) {
        memcpy(f->bytes + offset, buffer, count);
        result = (int)count;
    }
    pthread_mutex_unlock(&files_lock);
    return result;
}

static int memfs_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    (void)fi;
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    int result = f ? set_size(f, (size_t)size) : -ENOENT;
    pthread_mutex_unlock(&files_lock);
    return result;
}

static int memfs_unlink(const char *path) {
    pthread_mutex_lock(&files_lock);
    struct file *f = file_at(path);
    if (f) {
        free(f->name);
        free(f->bytes);
        *f = files[--file_count];   /* the last file fills the gap */
    }
    pthread_mutex_unlock(&files_lock);
    return f ? 0 : -ENOENT;
}

static const struct fuse_operations operations = {
    .init = memfs_init,
    .getattr = memfs_getattr,
    .readdir = memfs_readdir,
    .create = memfs_create,
    .open = memfs_open,
    .read = memfs_read,
    .write = memfs_write,
    .truncate = memfs_truncate,
    .unlink = memfs_unlink,
};

int main(int argc, char **argv) {
    return fuse_main(argc, argv, &operations, NULL);
}
