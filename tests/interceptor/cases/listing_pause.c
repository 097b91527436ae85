/* listing_pause DIR: pauses and resumes the recording of its listings
 * through the control paths (ste/control.h) and lists DIR/A..K around
 * them (and DIR/L twice, paused then not), from the main thread, a second
 * thread, a forked child and an exec'd image. DIR/M and DIR/N do not
 * exist. What must be recorded is asserted in interceptor_test.cc
 * (ListingsPausedThroughControlPaths).
 *
 * listing_pause list DIR: lists DIR (the exec'd image, which starts
 * unpaused). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "ste/control.h"

static const char* dir;
static pthread_barrier_t barrier;

static void list(const char* name) {
  DIR* d = opendir(join(dir, name));
  CHECK(d != NULL);
  closedir(d);
}

/* A control path is a real lookup that fails: ENOENT. */
static void control(const char* path) {
  struct stat st;
  errno = 0;
  CHECK(stat(path, &st) == -1 && errno == ENOENT);
}

static void* second_thread(void* arg) {
  (void)arg;
  list("F"); /* the main thread is paused, this one is not */
  control(STE_CONTROL_PAUSE_LISTINGS);
  pthread_barrier_wait(&barrier); /* 1: the main thread resumes, lists J */
  pthread_barrier_wait(&barrier); /* 2 */
  list("K"); /* this thread is paused */
  control(STE_CONTROL_RESUME_LISTINGS);
  return NULL;
}

static void wait_ok(pid_t pid) {
  int status;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "list") == 0) {
    DIR* d = opendir(argv[2]);
    CHECK(d != NULL);
    closedir(d);
    return 0;
  }
  CHECK(argc == 2);
  dir = argv[1];
  struct stat st;

  list("A");

  control(STE_CONTROL_PAUSE_LISTINGS);
  list("B");
  list("L"); /* listed again below, after the resume */
  struct dirent** entries;
  int n = scandir(join(dir, "B"), &entries, NULL, alphasort);
  CHECK(n >= 0);
  for (int i = 0; i < n; i++) free(entries[i]);
  free(entries);
  int fd = open(join(dir, "B"), O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  DIR* d = fdopendir(fd);
  CHECK(d != NULL);
  closedir(d);
  /* Not listings: recorded while paused. */
  CHECK(stat(join(dir, "M"), &st) == -1 && errno == ENOENT);
  CHECK(opendir(join(dir, "N")) == NULL && errno == ENOENT);
  control(STE_CONTROL_RESUME_LISTINGS);

  list("C");
  list("L"); /* the paused listing was not remembered as recorded */

  /* Nested, through other lookup calls: open, access, fstatat, lstat. */
  CHECK(open(STE_CONTROL_PAUSE_LISTINGS, O_RDONLY) == -1 && errno == ENOENT);
  CHECK(access(STE_CONTROL_PAUSE_LISTINGS, F_OK) == -1 && errno == ENOENT);
  CHECK(fstatat(AT_FDCWD, STE_CONTROL_RESUME_LISTINGS, &st, 0) == -1 && errno == ENOENT);
  list("D");
  CHECK(lstat(STE_CONTROL_RESUME_LISTINGS, &st) == -1 && errno == ENOENT);
  list("E");
  /* A resume too many does nothing: the count stays at 0, so the pause
   * below pauses. */
  control(STE_CONTROL_RESUME_LISTINGS);

  /* Reserved, unknown: ignored, not recorded. */
  control("/\001ste/unknown");

  control(STE_CONTROL_PAUSE_LISTINGS);
  CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, second_thread, NULL) == 0);
  pthread_barrier_wait(&barrier); /* 1: the second thread listed F, paused */
  control(STE_CONTROL_RESUME_LISTINGS);
  list("J"); /* the second thread is paused, this one is not */
  control(STE_CONTROL_PAUSE_LISTINGS);
  pthread_barrier_wait(&barrier); /* 2 */
  CHECK(pthread_join(thread, NULL) == 0);
  pthread_barrier_destroy(&barrier);

  /* Still paused: a forked child inherits it... */
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    list("G");
    control(STE_CONTROL_RESUME_LISTINGS);
    list("H");
    _exit(0);
  }
  wait_ok(pid);
  /* ...an exec'd image starts unpaused. */
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    execl(argv[0], argv[0], "list", join(dir, "I"), (char*)NULL);
    _exit(98);
  }
  wait_ok(pid);
  control(STE_CONTROL_RESUME_LISTINGS);
  return 0;
}
