/* hook_call CALL DIR: performs exactly one hooked call on files in DIR
 * (prepared by the test: f, d/ with entries, l -> f). Table-driven from
 * interceptor_test.cc. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int __open_2(const char*, int);
int __open64_2(const char*, int);
int __openat_2(int, const char*, int);
int __openat64_2(int, const char*, int);

static int all(const struct dirent* e) { (void)e; return 1; }
static int all64(const struct dirent64* e) { (void)e; return 1; }

int main(int argc, char** argv) {
  CHECK(argc == 3);
  const char* call = argv[1];
  const char* dir = argv[2];
  const char* f = join(dir, "f");
  const char* d = join(dir, "d");
  const char* l = join(dir, "l");
  const char* missing = join(dir, "missing");
  struct stat st;
  struct stat64 st64;
  char buf[4096];
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  CHECK(dfd >= 0);
#define IS(name) (strcmp(call, name) == 0)
  if (IS("open")) CHECK(open(f, O_RDONLY) >= 0);
  else if (IS("open64")) CHECK(open64(f, O_RDONLY) >= 0);
  else if (IS("openat")) CHECK(openat(dfd, "f", O_RDONLY) >= 0);
  else if (IS("openat64")) CHECK(openat64(dfd, "f", O_RDONLY) >= 0);
  else if (IS("__open_2")) CHECK(__open_2(f, O_RDONLY) >= 0);
  else if (IS("__open64_2")) CHECK(__open64_2(f, O_RDONLY) >= 0);
  else if (IS("__openat_2")) CHECK(__openat_2(dfd, "f", O_RDONLY) >= 0);
  else if (IS("__openat64_2")) CHECK(__openat64_2(dfd, "f", O_RDONLY) >= 0);
  else if (IS("creat")) CHECK(creat(join(dir, "new"), 0644) >= 0);
  else if (IS("creat64")) CHECK(creat64(join(dir, "new"), 0644) >= 0);
  else if (IS("open_write")) CHECK(open(join(dir, "new"), O_WRONLY | O_CREAT, 0644) >= 0);
  else if (IS("open_rdwr_creat")) CHECK(open(f, O_RDWR | O_CREAT, 0644) >= 0);
  else if (IS("open_missing")) CHECK(open(missing, O_RDONLY) < 0 && errno == ENOENT);
  else if (IS("open_enotdir")) CHECK(open(join(dir, "f/x"), O_RDONLY) < 0 && errno == ENOTDIR);
  else if (IS("fopen")) CHECK(fopen(f, "r") != NULL);
  else if (IS("fopen64")) CHECK(fopen64(f, "r") != NULL);
  else if (IS("fopen_w")) CHECK(fopen(join(dir, "new"), "w") != NULL);
  else if (IS("fopen_a_plus")) CHECK(fopen(f, "a+") != NULL);
  else if (IS("fopen_missing")) CHECK(fopen(missing, "r") == NULL && errno == ENOENT);
  else if (IS("freopen")) CHECK(freopen(f, "r", stdin) != NULL);
  else if (IS("freopen64")) CHECK(freopen64(f, "r", stdin) != NULL);
  else if (IS("stat")) CHECK(stat(f, &st) == 0);
  else if (IS("stat64")) CHECK(stat64(f, &st64) == 0);
  else if (IS("lstat")) CHECK(lstat(l, &st) == 0);
  else if (IS("lstat64")) CHECK(lstat64(l, &st64) == 0);
  else if (IS("fstatat")) CHECK(fstatat(dfd, "f", &st, 0) == 0);
  else if (IS("fstatat64")) CHECK(fstatat64(dfd, "f", &st64, 0) == 0);
  else if (IS("statx")) {
    struct statx sx;
    CHECK(statx(dfd, "f", 0, STATX_ALL, &sx) == 0);
  } else if (IS("stat_missing")) CHECK(stat(missing, &st) < 0 && errno == ENOENT);
  else if (IS("__xstat") || IS("__lxstat")) {
    /* Compat symbols: new programs cannot link them, old ones call them. */
    int (*fn)(int, const char*, struct stat*) =
        (int (*)(int, const char*, struct stat*))dlsym(RTLD_DEFAULT, call);
    CHECK(fn != NULL);
    CHECK(fn(1, f, &st) == 0);
  } else if (IS("__fxstatat")) {
    int (*fn)(int, int, const char*, struct stat*, int) =
        (int (*)(int, int, const char*, struct stat*, int))dlsym(RTLD_DEFAULT, call);
    CHECK(fn != NULL);
    CHECK(fn(1, dfd, "f", &st, 0) == 0);
  } else if (IS("access")) CHECK(access(f, R_OK) == 0);
  else if (IS("access_missing")) CHECK(access(missing, F_OK) < 0 && errno == ENOENT);
  else if (IS("faccessat")) CHECK(faccessat(dfd, "f", R_OK, 0) == 0);
  else if (IS("euidaccess")) CHECK(euidaccess(f, R_OK) == 0);
  else if (IS("eaccess")) CHECK(eaccess(f, R_OK) == 0);
  else if (IS("readlink")) CHECK(readlink(l, buf, sizeof buf) > 0);
  else if (IS("readlinkat")) CHECK(readlinkat(dfd, "l", buf, sizeof buf) > 0);
  else if (IS("realpath")) CHECK(realpath(l, buf) != NULL);
  else if (IS("opendir")) {
    DIR* dp = opendir(d);
    CHECK(dp != NULL);
    while (readdir(dp)) {
    }
  } else if (IS("opendir_missing")) CHECK(opendir(missing) == NULL && errno == ENOENT);
  else if (IS("fdopendir")) {
    int fd = open(d, O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0);
    CHECK(fdopendir(fd) != NULL);
  } else if (IS("scandir")) {
    struct dirent** list;
    CHECK(scandir(d, &list, all, alphasort) >= 0);
  } else if (IS("scandir64")) {
    struct dirent64** list;
    CHECK(scandir64(d, &list, all64, alphasort64) >= 0);
  } else if (IS("scandirat")) {
    struct dirent** list;
    CHECK(scandirat(dfd, "d", &list, all, alphasort) >= 0);
  } else if (IS("chdir")) CHECK(chdir(d) == 0);
  else if (IS("mkstemp")) {
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/tmp-XXXXXX", dir);
    CHECK(mkstemp(tmpl) >= 0);
    printf("%s\n", tmpl);
  } else if (IS("mkdtemp")) {
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/tmpd-XXXXXX", dir);
    CHECK(mkdtemp(tmpl) != NULL);
    printf("%s\n", tmpl);
  }
  else {
    fprintf(stderr, "unknown call %s\n", call);
    return 2;
  }
  return 0;
}
