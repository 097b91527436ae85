/* threads_fork DIR: 8 threads each look up 300 distinct missing names
 * while the main thread forks 20 children that each look up one name. */
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static const char* dir;

static void* worker(void* arg) {
  long t = (long)arg;
  char name[4096];
  struct stat st;
  for (int k = 0; k < 300; k++) {
    snprintf(name, sizeof name, "%s/t%ld_%d", dir, t, k);
    CHECK(stat(name, &st) < 0);
  }
  return NULL;
}

int main(int argc, char** argv) {
  CHECK(argc == 2);
  dir = argv[1];
  pthread_t threads[8];
  for (long t = 0; t < 8; t++) CHECK(pthread_create(&threads[t], NULL, worker, (void*)t) == 0);
  for (int c = 0; c < 20; c++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      char name[4096];
      struct stat st;
      snprintf(name, sizeof name, "%s/child%d", dir, c);
      stat(name, &st);
      _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int t = 0; t < 8; t++) pthread_join(threads[t], NULL);
  return 0;
}
