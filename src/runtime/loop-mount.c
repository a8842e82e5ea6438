/*
 * loop-mount IMAGE DIR: mounts the ext4 image IMAGE on DIR through a loop device of its own, as the kit mounts a
 * sandbox's disk (sandbox-disk.ts): noatime, noinit_itable, the loop device freed by the kernel when DIR is unmounted
 * (LO_FLAGS_AUTOCLEAR). It does what `mount -t ext4 -o loop,noatime,noinit_itable IMAGE DIR` does, without the
 * overlap checks util-linux makes first: those open every loop device and read every mount's backing file, so with
 * 200 sandboxes a mount took 25 ms instead of 13 (docs/runtime.md, "Disk").
 *
 * The free device comes from /dev/loop-control (LOOP_CTL_GET_FREE) and is configured in one call (LOOP_CONFIGURE,
 * Linux 5.8); another process may take the same device between the two, which LOOP_CONFIGURE refuses with EBUSY, so
 * it asks again. On any failure what was set up is undone, the reason is printed on stderr and the exit code is 1;
 * 0 once DIR shows the image. Run by the kit as root; built by scripts/build-native.ts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#define TRIES 64

static int fail(const char *what, const char *arg, int err) {
  fprintf(stderr, "loop-mount: %s %s: %s\n", what, arg, strerror(err));
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loop-mount IMAGE DIR\n");
    return 2;
  }
  const char *image = argv[1];
  const char *dir = argv[2];
  int file = open(image, O_RDWR | O_CLOEXEC);
  if (file < 0) return fail("open", image, errno);
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) return fail("open", "/dev/loop-control", errno);

  struct loop_config config;
  memset(&config, 0, sizeof config);
  config.fd = (unsigned)file;
  config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
  strncpy((char *)config.info.lo_file_name, image, LO_NAME_SIZE - 1);

  char device[32];
  int loop = -1;
  for (int i = 0; i < TRIES && loop < 0; i++) {
    int n = ioctl(control, LOOP_CTL_GET_FREE);
    if (n < 0) return fail("LOOP_CTL_GET_FREE", "/dev/loop-control", errno);
    snprintf(device, sizeof device, "/dev/loop%d", n);
    int fd = open(device, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue; /* devtmpfs has not made the node yet */
      return fail("open", device, errno);
    }
    if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
      loop = fd;
      break;
    }
    int err = errno;
    close(fd);
    if (err != EBUSY) return fail("LOOP_CONFIGURE", device, err);
  }
  if (loop < 0) {
    fprintf(stderr, "loop-mount: no free loop device after %d tries\n", TRIES);
    return 1;
  }
  close(file);
  close(control);

  if (mount(device, dir, "ext4", MS_NOATIME, "noinit_itable") != 0) {
    int err = errno;
    ioctl(loop, LOOP_CLR_FD);
    close(loop);
    return fail("mount on", dir, err);
  }
  /* The mount holds the device now; with AUTOCLEAR it is freed when DIR is unmounted. */
  close(loop);
  return 0;
}
