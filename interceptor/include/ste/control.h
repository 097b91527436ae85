/* Control paths: how a process under libste_preload.so talks to it with
 * nothing but a failing stat().
 *
 * Some callers must tell the interceptor something, cheaply and without
 * resolving its symbols (ste's Python startup hook runs at every Python
 * start; ctypes costs too much there). They look up a reserved path. Every
 * absolute path that starts with the bytes STE_CONTROL_PREFIX ("/", 0x01,
 * "ste/") is reserved; no real file has such a name because the
 * directory "/\001ste" does not exist.
 *
 * The call
 * --------
 * Any hooked lookup of exactly one of the paths below, as the caller wrote
 * it (absolute, byte for byte, no "//" or "." inside): stat, stat64, lstat,
 * lstat64, fstatat, fstatat64, statx, access, faccessat, euidaccess, open,
 * fopen, ... (fstatat/statx with an ignored dirfd, the path being
 * absolute). Python's os.stat() is stat64() in Debian 12's Python 3.11
 * (glibc 2.36), os.lstat() lstat64(), os.stat(..., follow_symlinks=False)
 * or with dir_fd fstatat64(); all are hooked.
 *
 * The call itself is real: the interceptor does not fake its result. The
 * kernel answers ENOENT, so callers must expect the lookup to fail (Python:
 * `try: os.stat(p) except FileNotFoundError: pass`). Outside ste, the same
 * call fails the same way and nothing else happens: the protocol is
 * harmless without the interceptor.
 *
 * Nothing at or below "/\001ste" is ever recorded: not the control paths
 * (not even as absent), not a reserved path the interceptor does not know
 * (ignored, so that a newer caller talking to an older interceptor changes
 * nothing), not "/\001ste" itself. A reserved path only acts when given in
 * exactly the spelling below; "/\001ste//pause-listings" or
 * "/\001ste/pause-listings/" is an unknown reserved path.
 *
 * Pausing listings
 * ----------------
 * STE_CONTROL_PAUSE_LISTINGS increments the calling thread's pause count;
 * STE_CONTROL_RESUME_LISTINGS decrements it, never below 0 (a resume
 * without a pause does nothing). While the count is above 0, the thread's
 * directory listings (opendir, fdopendir, scandir, scandir64, scandirat:
 * STE_KIND_LISTING in ste/log_format.h) are not recorded at all, not even
 * as unfollowed when the directory's path cannot be resolved. Everything
 * else the thread does is recorded as always: a file it opens is content,
 * a missing file it looks up is absent, and an opendir that fails is a
 * lookup like any other (absent on ENOENT/ENOTDIR, content on EACCES...).
 * A caller pauses when it records a finer dependency on the directory
 * itself (the Python hook: "the names ending in .pth in this directory").
 *
 * Pauses nest: pause, pause, resume leaves listings paused.
 *
 * Threads, fork, exec
 * -------------------
 *   - The count is per thread: other threads' listings are recorded while
 *     one thread is paused. A new thread starts at 0.
 *   - A forked child inherits the count of the thread that called fork()
 *     (its only thread is a copy of that one).
 *   - An exec'd image starts at 0, whatever the count was before exec.
 *   - A vfork child runs on its parent's thread and shares its memory until
 *     it execs: a pause or resume there is its parent's too. (A vfork child
 *     may only exec or _exit anyway.)
 *   - A signal handler runs on the interrupted thread, with its count.
 *
 * Trust
 * -----
 * Any process of a test can hide its own listings this way, as it could
 * write into its own log. ste trusts a test's processes as it trusts the
 * logs they write; the protocol does not let a process hide anything of
 * another process or another thread, nor anything but listings.
 */
#ifndef STE_CONTROL_H_
#define STE_CONTROL_H_

/* The reserved prefix: "/", the byte 0x01, "ste/" (6 bytes). */
#define STE_CONTROL_PREFIX "/\001ste/"
#define STE_CONTROL_PREFIX_LEN 6

/* Look this path up: this thread's listings stop being recorded. */
#define STE_CONTROL_PAUSE_LISTINGS "/\001ste/pause-listings"

/* Look this path up: undoes one STE_CONTROL_PAUSE_LISTINGS. */
#define STE_CONTROL_RESUME_LISTINGS "/\001ste/resume-listings"

#endif /* STE_CONTROL_H_ */
