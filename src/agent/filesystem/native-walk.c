/*
 * ListDir's walk as the agent's native addon (Node-API only, so one build loads in any node of the line the kit runs
 * on). It runs on libuv pool threads, one batch of entries at a time, in two stages: one batch is read and stat'd
 * while the batch before has its attribute lists probed, and the main thread writes the JSON of the one before that.
 * native-walk.ts is its JavaScript side; docs/agent.md ("ListDir") has the measurements.
 *
 *   open(root, depth, batch) -> a walk, or the errno of reading `root`
 *   next(walk, into) -> Promise<number>: writes the next records into the Buffer `into` (at most `batch`, as many as
 *     fit) and gives their bytes; 0 at the end. `into` is the caller's (native-walk.ts takes it from the ListDir's pool
 *     and reuses it), word-aligned and at least MIN_INTO_BYTES long, so one record of the longest path always fits
 *   probe(records, prefix) -> Promise<Buffer>: the same records with F_PREFIXED_XATTR set where it applies
 *   close(walk): frees what it holds (a batch still running does when it ends); the handle's finalizer frees the rest
 *
 * The walk is walk.ts's, in the same order with the same rules: entries depth-first pre-order, names sorted bytewise,
 * `depth` levels below `root`; an entry that cannot be stat'd (vanished, not searchable, a path of PATH_MAX bytes or
 * more, which the kernel refuses) is left out; a directory is descended when its level is below `depth` and it can be
 * read, else it is listed only; symlinks are listed, never descended. Per entry: newfstatat(AT_FDCWD, path,
 * AT_SYMLINK_NOFOLLOW) (what glibc's lstat makes); then in probe, for everything but a symlink, one llistxattr into a
 * buffer of the kernel's list limit, which says whether a name starts with `prefix` and is longer than it (the caller
 * then reads the values); a list that cannot be read (no xattrs on this filesystem, the entry vanished) counts as none.
 *
 * A record is RECORD_WORDS little-endian 32-bit words (the layout below), then the entry's path and a NUL, padded to
 * 4 bytes; its name is the path's last W_NAME_AT bytes onward. Paths,
 * names and the prefix are byte strings, given as latin1 JS strings (one char per byte). System calls go through
 * syscall(2) rather than glibc's stat wrappers, whose symbol versions (2.33) older root filesystems lack; gVisor
 * implements newfstatat, llistxattr and getdents64.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* A record's words: the layout native-walk.ts reads. */
enum {
  W_LEVEL, /* 1 for an entry of the root */
  W_MODE,
  W_UID,
  W_GID,
  W_SIZE_LO,
  W_SIZE_HI,
  W_MTIME_SEC_LO,
  W_MTIME_SEC_HI,
  W_MTIME_NSEC,
  W_FLAGS,
  W_PATH_BYTES,
  W_NAME_AT, /* where the name starts in the path */
  RECORD_WORDS
};
enum { F_PREFIXED_XATTR = 1 };

#define XATTR_LIST_BYTES 65536 /* XATTR_LIST_MAX: no list is longer, so one call always reads all of it */
#define PREFIX_BYTES 256
#define NAME_MAX_BYTES 255
/* The smallest Buffer next() takes: one record of the longest path the walk lists (and its NUL, padded). */
#define MIN_INTO_BYTES (RECORD_WORDS * 4 + PATH_MAX + 4)

/* One directory being listed: its names, sorted, and where its path ends in the walk's path buffer. */
typedef struct {
  char *block; /* the names, NUL-terminated, back to back */
  char **names;
  size_t count;
  size_t next;
  size_t dir_len;
} level_t;

typedef struct {
  char path[PATH_MAX]; /* the directory of the top level, then the entry being stat'd */
  level_t *levels;
  size_t top; /* levels in use */
  size_t cap;
  uint32_t depth;
  uint32_t batch;
  napi_ref into_ref; /* keeps the caller's Buffer alive while a batch writes into it */
  char *into;
  size_t into_cap;
  size_t out_bytes;
  int refs; /* the JS handle, and a batch while it runs */
  int closed;
  int busy;
  napi_async_work work;
  napi_deferred deferred;
} walk_t;

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Reads the names of the directory at w->path (all but . and ..), sorted; 0 or an errno. */
static int read_level(walk_t *w, size_t dir_len, level_t *lv) {
  memset(lv, 0, sizeof *lv);
  lv->dir_len = dir_len;
  DIR *d = opendir(w->path);
  if (d == NULL) return errno;
  size_t used = 0, cap = 0, count = 0;
  char *block = NULL;
  struct dirent *e;
  int err = 0;
  for (;;) {
    errno = 0;
    e = readdir(d);
    if (e == NULL) {
      err = errno;
      break;
    }
    const char *n = e->d_name;
    if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
    size_t len = strlen(n) + 1;
    if (used + len > cap) {
      size_t grown_cap = cap == 0 ? 4096 : cap * 2;
      char *grown = realloc(block, grown_cap);
      if (grown == NULL) {
        err = ENOMEM;
        break;
      }
      block = grown;
      cap = grown_cap;
    }
    memcpy(block + used, n, len);
    used += len;
    count++;
  }
  closedir(d);
  char **names = err == 0 && count > 0 ? malloc(count * sizeof *names) : NULL;
  if (err == 0 && count > 0 && names == NULL) err = ENOMEM;
  if (err != 0) {
    free(block);
    return err;
  }
  for (size_t i = 0, at = 0; i < count; i++) {
    names[i] = block + at;
    at += strlen(block + at) + 1;
  }
  qsort(names, count, sizeof *names, cmp_names); /* strcmp orders bytes as unsigned: bytewise */
  lv->block = block;
  lv->names = names;
  lv->count = count;
  return 0;
}

static void free_level(level_t *lv) {
  free(lv->block);
  free(lv->names);
  lv->block = NULL;
  lv->names = NULL;
}

/* Frees what a walk holds beside its struct; idempotent. */
static void walk_release(walk_t *w) {
  while (w->top > 0) free_level(&w->levels[--w->top]);
  free(w->levels);
  w->levels = NULL;
}

static void walk_free(walk_t *w) {
  walk_release(w);
  free(w);
}

/* The struct lives while the JS handle does (its finalizer drops that reference) or a batch runs. */
static void walk_unref(walk_t *w) {
  if (--w->refs == 0) walk_free(w);
}

/* Whether the NUL-separated list holds a name that starts with `prefix` and is longer than it. */
static int has_prefixed(const char *list, ssize_t len, const char *prefix, size_t prefix_len) {
  const char *p = list;
  const char *end = list + len;
  while (p < end) {
    size_t n = strnlen(p, (size_t)(end - p));
    if (n > prefix_len && memcmp(p, prefix, prefix_len) == 0) return 1;
    p += n + 1;
  }
  return 0;
}

/* On a pool thread (no JS here): up to w->batch records into w->into, as many as fit. */
static void walk_execute(napi_env env, void *data) {
  (void)env;
  walk_t *w = data;
  uint32_t found = 0;
  size_t used = 0;
  while (found < w->batch && w->top > 0) {
    level_t *lv = &w->levels[w->top - 1];
    if (lv->next >= lv->count) {
      free_level(lv);
      w->top--;
      continue;
    }
    const char *name = lv->names[lv->next++];
    size_t len = strlen(name);
    int root = lv->dir_len == 1 && w->path[0] == '/';
    size_t base = root ? 1 : lv->dir_len + 1;
    if (base + len >= PATH_MAX || len > NAME_MAX_BYTES) continue;
    if (used + RECORD_WORDS * 4 + base + len + 4 > w->into_cap) {
      lv->next--; /* this entry starts the next batch (an empty batch always has room: MIN_INTO_BYTES) */
      break;
    }
    w->path[base - 1] = '/';
    memcpy(w->path + base, name, len + 1);
    struct stat st;
    if (syscall(SYS_newfstatat, AT_FDCWD, w->path, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    uint64_t size = (uint64_t)st.st_size;
    uint64_t sec = (uint64_t)(int64_t)st.st_mtim.tv_sec;
    uint32_t *r = (uint32_t *)(w->into + used);
    r[W_LEVEL] = (uint32_t)w->top;
    r[W_MODE] = st.st_mode;
    r[W_UID] = st.st_uid;
    r[W_GID] = st.st_gid;
    r[W_SIZE_LO] = (uint32_t)size;
    r[W_SIZE_HI] = (uint32_t)(size >> 32);
    r[W_MTIME_SEC_LO] = (uint32_t)sec;
    r[W_MTIME_SEC_HI] = (uint32_t)(sec >> 32);
    r[W_MTIME_NSEC] = (uint32_t)st.st_mtim.tv_nsec;
    r[W_FLAGS] = 0;
    r[W_PATH_BYTES] = (uint32_t)(base + len);
    r[W_NAME_AT] = (uint32_t)base;
    memcpy(r + RECORD_WORDS, w->path, base + len + 1);
    used += RECORD_WORDS * 4 + ((base + len + 1 + 3) & ~(size_t)3);
    found++;
    if (S_ISDIR(st.st_mode) && w->top < w->depth) {
      if (w->top == w->cap) {
        size_t cap = w->cap * 2;
        level_t *grown = realloc(w->levels, cap * sizeof *grown);
        if (grown == NULL) continue; /* listed, not descended, as an unreadable one */
        w->levels = grown;
        w->cap = cap;
      }
      /* read_level reads w->path, which is this entry's path now */
      if (read_level(w, base + len, &w->levels[w->top]) == 0) w->top++;
    }
  }
  w->out_bytes = used;
}

static void walk_complete(napi_env env, napi_status status, void *data) {
  walk_t *w = data;
  napi_value bytes;
  napi_deferred deferred = w->deferred;
  napi_delete_async_work(env, w->work);
  napi_delete_reference(env, w->into_ref);
  w->into_ref = NULL;
  w->into = NULL;
  w->busy = 0;
  if (status == napi_ok && napi_create_uint32(env, (uint32_t)w->out_bytes, &bytes) == napi_ok) {
    napi_resolve_deferred(env, deferred, bytes);
  } else {
    napi_value msg, err;
    napi_create_string_utf8(env, "native walk: a batch did not run", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &err);
    napi_reject_deferred(env, deferred, err);
  }
  if (w->closed) walk_release(w);
  walk_unref(w);
}

/* probe: a batch of records whose attribute lists are read on a pool thread. */
typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref records; /* keeps the Buffer alive while the pool thread writes its flags */
  uint32_t *data;
  size_t bytes;
  char prefix[PREFIX_BYTES];
  size_t prefix_len;
} probe_t;

static void probe_execute(napi_env env, void *data) {
  (void)env;
  probe_t *p = data;
  char *xattrs = malloc(XATTR_LIST_BYTES);
  if (xattrs == NULL) return; /* flags stay 0: no metadata, as when a list cannot be read */
  size_t at = 0;
  while (at + RECORD_WORDS * 4 <= p->bytes) {
    uint32_t *r = (uint32_t *)((char *)p->data + at);
    const char *path = (const char *)(r + RECORD_WORDS);
    if (at + RECORD_WORDS * 4 + (size_t)r[W_PATH_BYTES] + 1 > p->bytes || path[r[W_PATH_BYTES]] != 0) break; /* not next()'s */
    if (!S_ISLNK(r[W_MODE])) {
      ssize_t n = llistxattr(path, xattrs, XATTR_LIST_BYTES);
      if ((n > 0 && has_prefixed(xattrs, n, p->prefix, p->prefix_len)) || (n < 0 && errno == ERANGE)) r[W_FLAGS] |= F_PREFIXED_XATTR;
    }
    at += RECORD_WORDS * 4 + ((r[W_PATH_BYTES] + 1 + 3) & ~(size_t)3);
  }
  free(xattrs);
}

static void probe_complete(napi_env env, napi_status status, void *data) {
  probe_t *p = data;
  napi_value buf;
  if (status == napi_ok && napi_get_reference_value(env, p->records, &buf) == napi_ok && buf != NULL) {
    napi_resolve_deferred(env, p->deferred, buf);
  } else {
    napi_value msg, err;
    napi_create_string_utf8(env, "native walk: a probe did not run", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &err);
    napi_reject_deferred(env, p->deferred, err);
  }
  napi_delete_reference(env, p->records);
  napi_delete_async_work(env, p->work);
  free(p);
}

static napi_value walk_probe(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  bool is_buffer = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || napi_is_buffer(env, argv[0], &is_buffer) != napi_ok ||
      !is_buffer) {
    napi_throw_type_error(env, NULL, "probe(records, prefix)");
    return NULL;
  }
  probe_t *p = calloc(1, sizeof *p);
  if (p == NULL) {
    napi_throw_type_error(env, NULL, "probe: out of memory");
    return NULL;
  }
  void *data;
  if (napi_get_buffer_info(env, argv[0], &data, &p->bytes) != napi_ok ||
      napi_get_value_string_latin1(env, argv[1], p->prefix, PREFIX_BYTES, &p->prefix_len) != napi_ok || p->prefix_len + 1 >= PREFIX_BYTES ||
      ((uintptr_t)data & 3) != 0) {
    free(p);
    napi_throw_type_error(env, NULL, "probe: records must be a word-aligned Buffer of next(), prefix a string shorter than 255 bytes");
    return NULL;
  }
  p->data = data;
  napi_value promise, name;
  if (napi_create_reference(env, argv[0], 1, &p->records) != napi_ok) {
    free(p);
    napi_throw_type_error(env, NULL, "probe: could not hold the records");
    return NULL;
  }
  if (napi_create_promise(env, &p->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "nativeWalkProbe", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, probe_execute, probe_complete, p, &p->work) != napi_ok) {
    napi_delete_reference(env, p->records);
    free(p);
    napi_throw_type_error(env, NULL, "probe: could not start");
    return NULL;
  }
  if (napi_queue_async_work(env, p->work) != napi_ok) {
    napi_delete_async_work(env, p->work);
    napi_delete_reference(env, p->records);
    free(p);
    napi_throw_type_error(env, NULL, "probe: could not queue");
    return NULL;
  }
  return promise;
}

static void walk_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  walk_t *w = data;
  w->closed = 1;
  if (!w->busy) walk_release(w);
  walk_unref(w);
}

static napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

static walk_t *walk_arg(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *w = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_external(env, argv[0], &w) != napi_ok) {
    return NULL;
  }
  return w;
}

static napi_value walk_open(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  uint32_t depth, batch;
  size_t root_len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return throw_type(env, "open(root, depth, batch)");
  if (napi_get_value_uint32(env, argv[1], &depth) != napi_ok || napi_get_value_uint32(env, argv[2], &batch) != napi_ok || depth == 0 ||
      batch == 0 || batch > 65536) {
    return throw_type(env, "open: depth must be at least 1 and batch 1..65536");
  }
  walk_t *w = calloc(1, sizeof *w);
  if (w == NULL) return throw_type(env, "open: out of memory");
  w->refs = 1;
  w->depth = depth;
  w->batch = batch;
  w->cap = 8;
  napi_value result;
  if (napi_get_value_string_latin1(env, argv[0], NULL, 0, &root_len) != napi_ok) {
    walk_free(w);
    return throw_type(env, "open: root must be a string");
  }
  int err = 0;
  if (root_len >= PATH_MAX) {
    err = ENAMETOOLONG;
  } else {
    napi_get_value_string_latin1(env, argv[0], w->path, PATH_MAX, &root_len);
    if (root_len == 0 || memchr(w->path, 0, root_len) != NULL) err = ENOENT;
  }
  w->levels = malloc(w->cap * sizeof *w->levels);
  if (err == 0 && w->levels == NULL) err = ENOMEM;
  if (err == 0) err = read_level(w, root_len, &w->levels[0]);
  if (err != 0) {
    walk_free(w);
    napi_create_int32(env, err, &result);
    return result;
  }
  w->top = 1;
  if (napi_create_external(env, w, walk_finalize, NULL, &result) != napi_ok) {
    walk_free(w);
    return throw_type(env, "open: could not make the handle");
  }
  return result;
}

static napi_value walk_next(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void *handle = NULL;
  void *into = NULL;
  size_t into_cap = 0;
  bool is_buffer = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || napi_get_value_external(env, argv[0], &handle) != napi_ok ||
      napi_is_buffer(env, argv[1], &is_buffer) != napi_ok || !is_buffer || napi_get_buffer_info(env, argv[1], &into, &into_cap) != napi_ok ||
      into_cap < MIN_INTO_BYTES || ((uintptr_t)into & 3) != 0) {
    return throw_type(env, "next(walk, into): into must be a word-aligned Buffer of at least MIN_INTO_BYTES");
  }
  walk_t *w = handle;
  if (w->closed || w->busy) return throw_type(env, "next: the walk is closed or has a batch running");
  napi_value promise, name;
  if (napi_create_reference(env, argv[1], 1, &w->into_ref) != napi_ok) return throw_type(env, "next: could not hold into");
  if (napi_create_promise(env, &w->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "nativeWalk", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, walk_execute, walk_complete, w, &w->work) != napi_ok) {
    napi_delete_reference(env, w->into_ref);
    w->into_ref = NULL;
    return throw_type(env, "next: could not start a batch");
  }
  /* Set before the work is queued: a pool thread may start it at once. */
  w->into = into;
  w->into_cap = into_cap;
  if (napi_queue_async_work(env, w->work) != napi_ok) {
    napi_delete_async_work(env, w->work);
    napi_delete_reference(env, w->into_ref);
    w->into_ref = NULL;
    w->into = NULL;
    return throw_type(env, "next: could not queue a batch");
  }
  w->busy = 1;
  w->refs++;
  return promise;
}

static napi_value walk_close(napi_env env, napi_callback_info info) {
  walk_t *w = walk_arg(env, info);
  if (w == NULL) return throw_type(env, "close(walk)");
  w->closed = 1;
  if (!w->busy) walk_release(w); /* else the batch's end does */
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn, words;
  if (napi_create_function(env, "open", NAPI_AUTO_LENGTH, walk_open, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "open", fn) != napi_ok)
    return NULL;
  if (napi_create_function(env, "next", NAPI_AUTO_LENGTH, walk_next, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "next", fn) != napi_ok)
    return NULL;
  if (napi_create_function(env, "probe", NAPI_AUTO_LENGTH, walk_probe, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "probe", fn) != napi_ok)
    return NULL;
  if (napi_create_function(env, "close", NAPI_AUTO_LENGTH, walk_close, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "close", fn) != napi_ok)
    return NULL;
  if (napi_create_uint32(env, RECORD_WORDS, &words) != napi_ok || napi_set_named_property(env, exports, "RECORD_WORDS", words) != napi_ok)
    return NULL;
  if (napi_create_uint32(env, MIN_INTO_BYTES, &words) != napi_ok || napi_set_named_property(env, exports, "MIN_INTO_BYTES", words) != napi_ok)
    return NULL;
  return exports;
}
