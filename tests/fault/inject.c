/* Fault injection for the fault tests (LD_PRELOAD): writes to cisa-sim's temp files
 * ("*.tmp-cisa.*", or paths containing CISA_FAULT_MATCH) fail once CISA_FAULT_AFTER bytes have been written, with the errno named by
 * CISA_FAULT_ERRNO (ENOSPC | EIO | EFBIG); CISA_FAULT_FSYNC=EIO makes fsync of any file fail.
 * Simulates a full disk or a failing device without root or a special file system. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long g_written;

static int named_errno(const char* name) {
  if (!name) return 0;
  if (!strcmp(name, "ENOSPC")) return ENOSPC;
  if (!strcmp(name, "EIO")) return EIO;
  if (!strcmp(name, "EFBIG")) return EFBIG;
  return 0;
}

static int is_temp(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const char* match = getenv("CISA_FAULT_MATCH");
  return strstr(path, match && *match ? match : ".tmp-cisa.") != NULL;
}

/* 0: let it through; else the errno to fail with. */
static int should_fail(int fd, size_t count) {
  const int err = named_errno(getenv("CISA_FAULT_ERRNO"));
  if (!err || !is_temp(fd)) return 0;
  const char* after = getenv("CISA_FAULT_AFTER");
  const long long limit = after ? atoll(after) : 0;
  if (g_written + (long long)count > limit) return err;
  g_written += (long long)count;
  return 0;
}

ssize_t write(int fd, const void* buf, size_t count) {
  static ssize_t (*real)(int, const void*, size_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  const int err = should_fail(fd, count);
  if (err) {
    errno = err;
    return -1;
  }
  return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  const int err = should_fail(fd, count);
  if (err) {
    errno = err;
    return -1;
  }
  return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) { return pwrite(fd, buf, count, offset); }

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  static ssize_t (*real)(int, const struct iovec*, int);
  if (!real) real = (ssize_t(*)(int, const struct iovec*, int))dlsym(RTLD_NEXT, "writev");
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  const int err = should_fail(fd, total);
  if (err) {
    errno = err;
    return -1;
  }
  return real(fd, iov, iovcnt);
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  const int err = named_errno(getenv("CISA_FAULT_FSYNC"));
  if (err) {
    errno = err;
    return -1;
  }
  return real(fd);
}
